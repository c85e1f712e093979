"""The few MLflow tracking calls a job needs, over MLflow's REST API with the standard library:
create a run, log a batch, end a run. No mlflow import on these paths (it costs seconds), so a
submit and a training loop never wait for it; only uploading artifacts uses the mlflow client
when it is installed (``pip install 'kale-ext[mlflow]'``), for any artifact store.

A shared leaf: the submit (backends), the local supervisor and the job's own processes use it.
Errors are :class:`TrackingError` with a message for people; callers turn them into one warning.
"""

from __future__ import annotations

import base64
import json
import os
import time
import urllib.parse
from pathlib import Path

from .files import open_regular
from .peers import _kale_ext_request

URI_ENV = "MLFLOW_TRACKING_URI"
RUN_ID_ENV = "KALE_EXT_MLFLOW_RUN_ID"
#: Set on jobs no supervisor watches (Kubernetes): rank 0 ends the run when it exits.
END_ENV = "KALE_EXT_MLFLOW_END_AT_EXIT"
#: How long one call may take in all (kale_ext/peers.py: not per read): a server that is down
#: or trickles must not hold up a submit or a job. Redirects are not followed: the credentials
#: (MLFLOW_TRACKING_TOKEN, ..._PASSWORD) go to the tracking URI's host only.
TIMEOUT = 5.0
#: The most of an answer read (a run's JSON is a few kB).
MAX_ANSWER = 8 << 20
#: An artifact's upload may take TIMEOUT more a second per this many bytes.
UPLOAD_RATE = 1 << 20
#: MLflow's limits: values per log-batch request, and characters of a param or tag value.
MAX_BATCH = 1000
MAX_PARAM = 6000
MAX_TAG = 8000


class TrackingError(Exception):
    """A tracking call failed; the message says what and where, for people."""


def now_ms() -> int:
    return int(time.time() * 1000)


def check_uri(uri: str) -> str:
    """A tracking URI this integration can talk to (http or https), or TrackingError."""
    parsed = urllib.parse.urlparse(uri)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise TrackingError(
            f"the MLflow tracking URI must be an http(s):// address of a tracking server, "
            f"not {uri!r}"
        )
    return uri.rstrip("/")


class Tracking:
    """An MLflow tracking server at ``uri``, called through its REST API."""

    def __init__(self, uri: str, timeout: float = TIMEOUT):
        self.uri = check_uri(uri)
        self.timeout = timeout

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        token = os.environ.get("MLFLOW_TRACKING_TOKEN")
        user = os.environ.get("MLFLOW_TRACKING_USERNAME")
        if token:
            headers["Authorization"] = f"Bearer {token}"
        elif user:
            secret = f"{user}:{os.environ.get('MLFLOW_TRACKING_PASSWORD', '')}"
            headers["Authorization"] = "Basic " + base64.b64encode(secret.encode()).decode()
        return headers

    def call(self, method: str, path: str, body: dict | None = None) -> dict:
        """One REST call (``path`` below /api/2.0/mlflow/); its JSON answer."""
        url = f"{self.uri}/api/2.0/mlflow/{path}"
        data = None
        if method == "GET" and body:
            url += "?" + urllib.parse.urlencode(body)
        elif body is not None:
            data = json.dumps(body, default=float).encode()
        return self._request(method, url, data)

    def _request(
        self, method: str, url: str, data=None, headers: dict | None = None, timeout=None
    ) -> dict:
        """One request within ``timeout`` s in all (default: the tracking's); its JSON."""
        headers = {**self._headers(), **(headers or {})}
        timeout = self.timeout if timeout is None else timeout
        try:
            code, answer, body = _kale_ext_request(method, url, data, headers, timeout,
                                                   limit=MAX_ANSWER)  # fmt: skip
        except OSError as e:  # refused, unreachable, timed out, too long
            reason = getattr(e, "reason", None) or e
            raise TrackingError(f"cannot reach the MLflow server at {self.uri}: {reason}") from None
        if 300 <= code < 400:
            raise TrackingError(
                f"{self.uri} answered {code}, a redirect to {answer.get('location')!r}: not "
                "followed (the credentials go to the tracking URI only); set "
                "MLFLOW_TRACKING_URI to where it points"
            )
        if code >= 400:
            raise TrackingError(f"{self.uri} answered {code}: {_message(body, code)}")
        try:
            return json.loads(body or b"{}")
        except ValueError:
            raise TrackingError(f"{self.uri} did not answer JSON to {method} {url}") from None

    def experiment_id(self, name: str) -> str:
        """The id of the experiment named ``name``, created when it does not exist."""
        try:
            found = self.call("GET", "experiments/get-by-name", {"experiment_name": name})
            return found["experiment"]["experiment_id"]
        except TrackingError as e:
            if "RESOURCE_DOES_NOT_EXIST" not in str(e):
                raise
        try:
            return self.call("POST", "experiments/create", {"name": name})["experiment_id"]
        except TrackingError as e:  # created meanwhile by another submit
            if "RESOURCE_ALREADY_EXISTS" not in str(e):
                raise
            found = self.call("GET", "experiments/get-by-name", {"experiment_name": name})
            return found["experiment"]["experiment_id"]

    def create_run(
        self, experiment: str, name: str, params: dict | None = None, tags: dict | None = None
    ) -> str:
        """A new RUNNING run in the experiment named ``experiment``; its id."""
        body = {
            "experiment_id": self.experiment_id(experiment),
            "run_name": name,
            "start_time": now_ms(),
            "tags": [{"key": k, "value": str(v)[:MAX_TAG]} for k, v in (tags or {}).items()],
        }
        run_id = self.call("POST", "runs/create", body)["run"]["info"]["run_id"]
        if params:
            items = [{"key": k, "value": str(v)[:MAX_PARAM]} for k, v in params.items()]
            for i in range(0, len(items), 100):  # MLflow takes 100 params per request
                batch = {"run_id": run_id, "params": items[i : i + 100]}
                self.call("POST", "runs/log-batch", batch)
        return run_id

    def log_metrics(self, run_id: str, metrics: list[dict]) -> None:
        """Metrics as MLflow takes them ({key, value, timestamp, step}), in batches."""
        for i in range(0, len(metrics), MAX_BATCH):
            batch = metrics[i : i + MAX_BATCH]
            self.call("POST", "runs/log-batch", {"run_id": run_id, "metrics": batch})

    def log_encoded(self, run_id: str, metrics: list[str]) -> None:
        """One log-batch of metrics given as JSON objects' text (at most MAX_BATCH)."""
        body = '{"run_id":' + json.dumps(run_id) + ',"metrics":[' + ",".join(metrics) + "]}"
        self._request("POST", f"{self.uri}/api/2.0/mlflow/runs/log-batch", body.encode())

    def end_run(self, run_id: str, status: str) -> None:
        """End a run: FINISHED, FAILED or KILLED."""
        self.call("POST", "runs/update", {"run_id": run_id, "status": status, "end_time": now_ms()})

    def log_artifacts(self, run_id: str, folder: Path) -> None:
        """Upload a folder's files as the run's artifacts: through the server when it serves
        them (``mlflow-artifacts:``), else with the mlflow client (any other store)."""
        files = sorted(p for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else []
        if not files:
            return
        root = self.call("GET", "runs/get", {"run_id": run_id})["run"]["info"]["artifact_uri"]
        parsed = urllib.parse.urlparse(root)
        if parsed.scheme != "mlflow-artifacts":
            return self._log_with_client(run_id, folder)
        base = f"{self.uri}/api/2.0/mlflow-artifacts/artifacts/{parsed.path.strip('/')}"
        for path in files:
            target = urllib.parse.quote(path.relative_to(folder).as_posix())
            try:  # read the one way: a regular file, kept inside the folder
                data = open_regular(path, inside=folder)
            except OSError:
                continue  # gone since, or a link out / a special file: never uploaded
            with data:
                size = os.fstat(data.fileno()).st_size
                headers = {"Content-Length": str(size), "Content-Type": "application/octet-stream"}
                took = self.timeout + size / UPLOAD_RATE  # bounded, and by its size
                self._request("PUT", f"{base}/{target}", data, headers, timeout=took)

    def _log_with_client(self, run_id: str, folder: Path) -> None:
        try:
            from mlflow.tracking import MlflowClient
        except ImportError:
            raise TrackingError(
                "the outputs were not uploaded as artifacts: install 'kale-ext[mlflow]'"
            ) from None
        try:
            MlflowClient(self.uri).log_artifacts(run_id, str(folder))
        except Exception as e:  # any store's failure, in words
            raise TrackingError(f"cannot upload the outputs to the run {run_id}: {e}") from None


def _message(body: bytes, code: int) -> str:
    from http.client import responses

    try:
        found = json.loads(body or b"{}")
        return f"{found.get('error_code', '')}: {found.get('message', '')}".strip(": ")
    except (ValueError, AttributeError):
        return responses.get(code, "")


#: A job's final status (job.json's) as an MLflow run status.
RUN_STATUS = {"Complete": "FINISHED", "Failed": "FAILED"}


def finish(env: dict, status: str, outputs: Path | None, cancelled: bool = False) -> str | None:
    """End the run a job's environment names (when it has one): its status from the job's, and
    the job's outputs folder as artifacts. Returns a warning, or None."""
    run_id, uri = env.get(RUN_ID_ENV), env.get(URI_ENV)
    if not run_id or not uri:
        return None
    try:
        tracking = Tracking(uri)
    except TrackingError as e:
        return str(e)
    warnings = []
    final = "KILLED" if cancelled else RUN_STATUS.get(status, "FAILED")
    for step in (
        lambda: outputs is not None and tracking.log_artifacts(run_id, outputs),
        lambda: tracking.end_run(run_id, final),
    ):
        try:
            step()
        except TrackingError as e:
            warnings.append(str(e))
    return "; ".join(warnings) or None
