"""Kubeflow Trainer's ``TrainJobStatus`` feature, emulated: its status server, the tokens it
checks and what its ``trainjobstatus`` plugin puts in a TrainJob's pods (kubeflow/trainer
``pkg/statusserver`` and ``pkg/runtime/framework/plugins/trainjobstatus``, v2.3).

- The plugin gives every trainer container ``KUBEFLOW_TRAINER_SERVER_URL`` (``https://<server>/
  apis/trainer.kubeflow.org/v1alpha1/namespaces/<ns>/trainjobs/<name>/status``), ``..._CA_CERT``
  and ``..._TOKEN`` (files under ``/var/run/secrets/kubeflow/trainer``), from a projected volume:
  a service-account token for the audience ``trainer.kubeflow.org/v1alpha1/namespaces/<ns>/
  trainjobs/<name>/status`` (an hour long) and ``ca.crt`` from the ConfigMap
  ``<name>-tls-config`` the controller makes, owned by the TrainJob.
- The server (HTTPS; here on 127.0.0.1, where the real one is the controller's webhook Service)
  answers ``POST`` on that path only (anything else: 404 ``Not found``); bodies over 64 KiB are
  413 ``Payload too large``. It authorizes first: a ``Bearer`` token signed by the cluster's
  issuer, not expired, for that job's audience, issued in that namespace; else 403
  ``Forbidden``. A body that is not one JSON object of the request's Go types (integers for the
  int32 fields, strings, an RFC 3339 time) is 422 ``Invalid payload``; no ``trainerStatus``
  is a 200 that changes nothing. Else it server-side applies ``status.trainerStatus`` as its own
  field manager, so the new one replaces the old whole, with the time in whole seconds as
  Kubernetes writes it; what the CRD refuses (percent outside 0–100, over 256 metrics, a name
  or value of 0 or over 64 characters, no ``lastUpdatedTime``) is 422 with the API server's
  message, a TrainJob that is not there 404 ``Train job not found``. Answers are
  ``metav1.Status`` bodies; a 200 echoes the request as the server decoded it.

Tokens are signed with HS256 by the emulated issuer (a real API server signs RS256 and the
status server verifies them by OIDC discovery); what is checked is the same: signature,
expiry, audience and the namespace claim.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import hmac
import json
import os
import re
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import aiohttp.web

from tests.harness import crd, trainer_rules
from tests.harness.tls import Certificates

TRAINJOBS = "trainer.kubeflow.org/v1alpha1/trainjobs"
URL_ENV, CA_ENV, TOKEN_ENV = (
    "KUBEFLOW_TRAINER_SERVER_URL",
    "KUBEFLOW_TRAINER_SERVER_CA_CERT",
    "KUBEFLOW_TRAINER_SERVER_TOKEN",
)
MOUNT = "/var/run/secrets/kubeflow/trainer"
VOLUME = "kubeflow-trainer-token"
TOKEN_SECONDS = 3600
MAX_BODY = 1 << 16
ISSUER = "https://kubernetes.default.svc.cluster.local"
INT32 = (-(2**31), 2**31 - 1)
RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")
PATH = re.compile(
    r"^/apis/trainer\.kubeflow\.org/v1alpha1/namespaces/(?P<ns>[^/]+)/trainjobs/(?P<name>[^/]+)"
    r"/status$"
)


def status_path(namespace: str, name: str) -> str:
    return f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/{namespace}/trainjobs/{name}/status"


def audience(namespace: str, name: str) -> str:
    return f"trainer.kubeflow.org/v1alpha1/namespaces/{namespace}/trainjobs/{name}/status"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Tokens:
    """The cluster's service-account token issuer (projected tokens), and their check."""

    def __init__(self) -> None:
        self.key = os.urandom(32)

    def issue(self, pod: dict, aud: str, seconds: int = TOKEN_SECONDS) -> str:
        meta, now = pod["metadata"], int(time.time())
        account = (pod.get("spec") or {}).get("serviceAccountName") or "default"
        claims = {"aud": [aud], "exp": now + seconds, "iat": now, "nbf": now, "iss": ISSUER,
                  "sub": f"system:serviceaccount:{meta['namespace']}:{account}",
                  "kubernetes.io": {"namespace": meta["namespace"],
                                    "pod": {"name": meta.get("name", ""), "uid": meta.get("uid", "")},
                                    "serviceaccount": {"name": account, "uid": ""}}}  # fmt: skip
        head = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
        signed = f"{head}.{_b64(json.dumps(claims).encode())}"
        return f"{signed}.{_b64(self._sign(signed))}"

    def _sign(self, text: str) -> bytes:
        return hmac.new(self.key, text.encode(), hashlib.sha256).digest()

    def claims(self, token: str, aud: str) -> dict | None:
        """The token's claims when it is ours, valid now and for ``aud``; else None."""
        try:
            head, body, signature = token.split(".")
            if not hmac.compare_digest(_unb64(signature), self._sign(f"{head}.{body}")):
                return None
            claims = json.loads(_unb64(body))
        except (ValueError, TypeError):
            return None
        now = time.time()
        auds = claims.get("aud")
        auds = [auds] if isinstance(auds, str) else auds or []
        if aud not in auds or not (claims.get("nbf", 0) - 60 <= now < claims.get("exp", 0)):
            return None
        return claims


def inject(pod: dict, tj: dict, server: str) -> None:
    """What the ``trainjobstatus`` plugin adds to a trainer pod (``server``: scheme, host and
    port of the status server)."""
    ns, name = tj["metadata"]["namespace"], tj["metadata"]["name"]
    env = [{"name": URL_ENV, "value": server + status_path(ns, name)},
           {"name": CA_ENV, "value": f"{MOUNT}/ca.crt"},
           {"name": TOKEN_ENV, "value": f"{MOUNT}/token"}]  # fmt: skip
    for container in pod["spec"].get("containers") or []:
        names = {e["name"] for e in env}
        container["env"] = [e for e in container.get("env") or [] if e["name"] not in names] + env
        mounts = [m for m in container.get("volumeMounts") or [] if m["name"] != VOLUME]
        container["volumeMounts"] = mounts + [{"name": VOLUME, "mountPath": MOUNT,
                                               "readOnly": True}]  # fmt: skip
    volumes = [v for v in pod["spec"].get("volumes") or [] if v["name"] != VOLUME]
    pod["spec"]["volumes"] = volumes + [{"name": VOLUME, "projected": {"sources": [
        {"serviceAccountToken": {"audience": audience(ns, name),
                                 "expirationSeconds": TOKEN_SECONDS, "path": "token"}},
        {"configMap": {"name": f"{name}-tls-config",
                       "items": [{"key": "ca.crt", "path": "ca.crt"}]}}]}}]  # fmt: skip


def tls_config_map(tj: dict, ca_pem: str) -> dict:
    """The ConfigMap ``<name>-tls-config`` with the status server's CA, owned by the TrainJob."""
    meta = tj["metadata"]
    owner = {"apiVersion": tj["apiVersion"], "kind": "TrainJob", "name": meta["name"],
             "uid": meta["uid"], "controller": True, "blockOwnerDeletion": True}  # fmt: skip
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": f"{meta['name']}-tls-config", "namespace": meta["namespace"],
                         "ownerReferences": [owner]},
            "data": {"ca.crt": ca_pem}}  # fmt: skip


class Invalid(Exception):
    """The request body does not decode into the server's Go types."""


def _int32(value, where: str):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not INT32[0] <= value <= INT32[1]:
        raise Invalid(f"{where}: cannot unmarshal {json.dumps(value)} into int32")
    return value


def _string(value, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise Invalid(f"{where}: cannot unmarshal {json.dumps(value)} into string")
    return value


def decode(data: bytes) -> dict | None:
    """The request's ``trainerStatus`` as the server's Go types hold it, in the order Kubernetes
    writes it (None when there is none); Invalid when it cannot be decoded."""
    try:
        request = json.loads(data)
    except (ValueError, UnicodeDecodeError) as e:
        raise Invalid(str(e)) from None
    if request is None:
        return None
    if not isinstance(request, dict):
        raise Invalid("the request is not an object")
    status = request.get("trainerStatus")
    if status is None:
        return None
    if not isinstance(status, dict):
        raise Invalid("trainerStatus is not an object")
    out: dict = {}
    for key in ("progressPercentage", "estimatedRemainingSeconds"):
        value = _int32(status.get(key), key)
        if value is not None:
            out[key] = value
    metrics = status.get("metrics")
    if metrics is not None:
        if not isinstance(metrics, list) or not all(isinstance(m, dict) for m in metrics):
            raise Invalid("metrics is not a list of objects")
        out["metrics"] = []
        for i, m in enumerate(metrics):  # empty strings are left out (omitempty)
            pair = {k: _string(m.get(k), f"metrics[{i}].{k}") for k in ("name", "value")}
            out["metrics"].append({k: v for k, v in pair.items() if v})
    when = status.get("lastUpdatedTime")
    if when is not None:
        text = _string(when, "lastUpdatedTime")
        if not RFC3339.match(text):
            raise Invalid(f"lastUpdatedTime: {text!r} is not RFC 3339")
        moment = datetime.fromisoformat(text.upper().replace("Z", "+00:00"))
        out["lastUpdatedTime"] = moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return out


def problems(tj: dict) -> list[str]:
    """What the API server refuses in the TrainJob's ``status.trainerStatus`` (the CRD's schema,
    bounds and CEL rule)."""
    found = [p.split(": ", 1)[1] for p in crd.schema_errors(tj)] + trainer_rules.violations(tj)
    return list(dict.fromkeys(p for p in found if p.startswith("status.trainerStatus")))


@dataclass
class Received:
    """A request the status server got, and what it answered."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    code: int = 0
    pod: str = ""  # the pod its token was issued to, when the token was good


@dataclass
class StatusServer:
    """The Trainer's status server on the emulated cluster's loop (``start`` gives its base)."""

    api: object
    tokens: Tokens
    certs: Certificates
    received: list[Received] = field(default_factory=list)
    base: str = ""

    async def start(self) -> str:
        app = aiohttp.web.Application(client_max_size=MAX_BODY)
        app.router.add_route("*", "/{tail:.*}", self.handle)
        self._runner = aiohttp.web.AppRunner(app)
        await self._runner.setup()
        site = aiohttp.web.TCPSite(self._runner, "127.0.0.1", 0,
                                   ssl_context=self.certs.server_context())  # fmt: skip
        await site.start()
        host, port = self._runner.addresses[0][:2]
        self.base = f"https://{host}:{port}"
        return self.base

    async def close(self) -> None:
        await self._runner.cleanup()

    @property
    def ca_pem(self) -> str:
        return Path(self.certs.ca).read_text()

    async def handle(self, request: aiohttp.web.Request) -> aiohttp.web.Response:
        body = b""
        while len(body) <= MAX_BODY and (chunk := await request.content.read(MAX_BODY + 1)):
            body += chunk
        seen = Received(request.method, request.path, dict(request.headers), body)
        self.received.append(seen)
        answer = await self._answer(request, body, seen)
        seen.code = answer.status
        return answer

    async def _answer(self, request, body: bytes, seen: Received) -> aiohttp.web.Response:
        found = PATH.match(request.path)
        if request.method != "POST" or found is None:
            return _failure(404, "NotFound", "Not found")
        if len(body) > MAX_BODY:
            return _failure(413, "RequestEntityTooLarge", "Payload too large")
        ns, name = found["ns"], found["name"]
        kind, _, token = request.headers.get("Authorization", "").partition(" ")
        claims = self.tokens.claims(token, audience(ns, name)) if kind == "Bearer" else None
        if claims is None or (claims.get("kubernetes.io") or {}).get("namespace") != ns:
            return _failure(403, "Forbidden", "Forbidden")
        seen.pod = ((claims["kubernetes.io"].get("pod") or {}).get("name")) or ""
        try:
            status = decode(body)
        except Invalid:
            return _failure(422, "Invalid", "Invalid payload")
        if status is None:
            return aiohttp.web.json_response({})
        tj = self.api.get(TRAINJOBS, ns, name)
        if tj is None:
            return _failure(404, "NotFound", "Train job not found")
        changed = copy.deepcopy(tj)
        changed.setdefault("status", {})["trainerStatus"] = status
        refused = problems(changed)
        if refused:
            listed = refused[0] if len(refused) == 1 else "[" + ", ".join(refused) + "]"
            message = f'TrainJob.trainer.kubeflow.org "{name}" is invalid: {listed}'
            return _failure(422, "Invalid", message)
        await self.api.put(TRAINJOBS, ns, changed)
        return aiohttp.web.json_response({"trainerStatus": status})


def _failure(code: int, reason: str, message: str) -> aiohttp.web.Response:
    body = {"metadata": {}, "status": "Failure", "message": message, "reason": reason,
            "code": code}  # fmt: skip
    return aiohttp.web.json_response(body, status=code)
