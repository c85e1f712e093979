"""Faults a test injects into the emulated cluster, each as a real cluster shows it:

- ``image_pull(image=...)``: the kubelet cannot pull the image (``Failed`` events,
  ``ImagePullBackOff``);
- ``unschedulable(...)``: the scheduler finds no node (``Pending``, ``FailedScheduling``);
- ``oom(...)``: the container is OOM-killed (exit code 137, ``OOMKilled``) after it printed
  ``after_lines`` lines;
- ``crash(...)``: a node's process dies of SIGKILL (exit code 137, ``Error``) after
  ``after_lines`` lines;
- ``api(status, verb=..., resource=...)``: the API server answers 403 (``Forbidden``: RBAC),
  404 (a resource it does not serve), 429 (``TooManyRequests``, with ``Retry-After``), 500 (``InternalError``) or 504 (``Timeout``,
  the API server's own request timeout) instead of serving, ``times`` times (or always), with
  its usual message or ``message``.

Pod faults pick pods by TrainJob name (a glob) and node index (None: every node), and apply to
every run of the container unless ``times`` says how many runs.
"""

from __future__ import annotations

import fnmatch
import threading
from dataclasses import dataclass

from tests.harness.cluster.render import INDEX, JOBSET
from tests.harness.cluster.store import status_error

API_ANSWERS = {
    403: ("Forbidden", "forbidden: the emulated cluster's injected fault"),
    404: ("NotFound", "the server could not find the requested resource"),  # not served
    429: ("TooManyRequests", "Too many requests, please try again later."),
    500: ("InternalError", "Internal error occurred: the emulated cluster's injected fault"),
    503: ("ServiceUnavailable", "the server is currently unable to handle the request"),
    504: ("Timeout", "Timeout: request did not complete within requested timeout - context "
                     "deadline exceeded"),
}  # fmt: skip


@dataclass
class PodFault:
    kind: str  # image, unschedulable, oom, crash
    job: str = "*"
    node: int | None = None
    image: str = "*"
    after_lines: int = 0
    times: int | None = None
    message: str = ""

    def matches(self, pod: dict) -> bool:
        meta = pod["metadata"]
        job = (meta.get("labels") or {}).get(JOBSET + "jobset-name", "")
        index = (meta.get("labels") or {}).get(INDEX)
        images = [c.get("image", "") for c in pod["spec"]["containers"]]
        return (
            fnmatch.fnmatchcase(job, self.job)
            and (self.node is None or index == str(self.node))
            and any(fnmatch.fnmatchcase(i, self.image) for i in images)
        )


@dataclass
class ApiFault:
    status: int
    verb: str | None = None  # kmock's action: list, watch, fetch (get), create, update, delete
    resource: str | None = None  # a plural: pods, trainjobs, ...
    times: int | None = None
    message: str | None = None  # instead of the status' usual message


class Faults:
    """The faults in force (a test's thread adds them; the cluster's loop reads them)."""

    def __init__(self):
        self.pods: list[PodFault] = []
        self.apis: list[ApiFault] = []
        self._lock = threading.Lock()

    def image_pull(self, image: str = "*", job: str = "*", node: int | None = None) -> PodFault:
        return self._add(PodFault("image", job, node, image))

    def unschedulable(self, job: str = "*", node: int | None = None,
                      why: str = "Insufficient nvidia.com/gpu") -> PodFault:  # fmt: skip
        return self._add(PodFault("unschedulable", job, node, message=why))

    def oom(self, job: str = "*", node: int | None = None, after_lines: int = 1,
            times: int | None = None) -> PodFault:  # fmt: skip
        return self._add(PodFault("oom", job, node, after_lines=after_lines, times=times))

    def crash(self, job: str = "*", node: int | None = None, after_lines: int = 1,
              times: int | None = None) -> PodFault:  # fmt: skip
        return self._add(PodFault("crash", job, node, after_lines=after_lines, times=times))

    def api(self, status: int, verb: str | None = None, resource: str | None = None,
            times: int | None = None, message: str | None = None) -> ApiFault:  # fmt: skip
        fault = ApiFault(status, verb, resource, times, message)
        with self._lock:
            self.apis.append(fault)
        return fault

    def clear(self) -> None:
        with self._lock:
            self.pods.clear()
            self.apis.clear()

    def _add(self, fault: PodFault) -> PodFault:
        with self._lock:
            self.pods.append(fault)
        return fault

    def pod_fault(self, kind: str, pod: dict, lines: int | None = None) -> PodFault | None:
        """The fault of that kind for the pod, if one applies now (a kill fault once ``lines``
        lines were printed), counting it down."""
        with self._lock:
            for fault in self.pods:
                if fault.kind != kind or not fault.matches(pod) or fault.times == 0:
                    continue
                if lines is not None and lines < fault.after_lines:
                    continue
                if fault.times is not None:
                    fault.times -= 1
                return fault
        return None

    async def api_answer(self, request) -> None:
        """Raise the injected answer for the request, if a fault applies to it."""
        verb = request.action.value.lower() if request.action else request.method.lower()
        with self._lock:
            for fault in self.apis:
                plural = request.resource.plural if request.resource else None
                wanted = fault.verb in (None, verb) and fault.resource in (None, plural)
                if not wanted or fault.times == 0:
                    continue
                if fault.times is not None:
                    fault.times -= 1
                reason, message = API_ANSWERS.get(fault.status, ("InternalError", "injected"))
                message = fault.message or message
                break
            else:
                return
        error = status_error(fault.status, reason, message)
        if fault.status == 429:
            error.details["retryAfterSeconds"] = 1
        raise error
