"""The embedded local backend: a job's nodes as processes on this machine.

Each node runs the TrainJob's own container command (the same bytes the cluster would run)
with the PET_* environment the Trainer torch plugin gives it, in the user's current Python
environment: no venv; what a job lacks goes into its own folder, never into the environment
(installs.py). Jobs live under the Jupyter data directory (a job.json record and one log file
per node), so they outlive a server restart.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

from ...files import jobs_dir as default_jobs_dir
from ...files import mark_jobs_dir, open_regular
from ...job.defaults import LOCAL_NICE
from ...job.framework_env import gpu_count
from ...job.mpi import unwrap
from ...job.procs import shape_text
from ...job.runtimes import Runtime
from ...job.spec import JobSpec
from ...job.trainjob import provenance, source_of, training_command
from ..base import (
    Backend,
    BackendError,
    Event,
    Failure,
    JobInfo,
    JobOutputs,
    LogLine,
    LogQuery,
    NodeState,
    NotFound,
    Status,
    Submitted,
    not_finished,
)
from ..snapshots import forget
from . import accelerators
from .checkpoints import LINEAGES, local_checkpoints
from .diskuse import disk_use
from .frameworks import LOCAL_RUNTIMES, check_runnable, unavailable
from .installs import refusal
from .jobenv import job_env
from .joblock import RECORD_LOCK, acting_on
from .links import claim, hand_over
from .logfiles import node_logs
from .mpirun import mpirun
from .outputs import final_folder, kept, listing
from .processes import start_time
from .progressfile import read_checkpoint, read_progress
from .queue import capacity, check_fits, launch, need_of
from .records import (
    Unreadable,
    half_made,
    now,
    settled,
    unreadable_info,
    update_record,
    write_record,
)
from .resources import resources_record
from .supervisor import FAILING
from .volumes import free_mounts, local_warnings, plan_mounts
from .workspace import WORKSPACE_PARTS, write_parts


class LocalBackend(Backend):
    name = "local"

    def __init__(
        self,
        jobs_dir: str | os.PathLike | None = None,
        allow_cpu_for_gpu: bool = False,
        capacity: int | None = None,
        nice: int = LOCAL_NICE,
    ):
        self.jobs_dir = Path(jobs_dir) if jobs_dir else default_jobs_dir()
        if self.jobs_dir.is_dir() and any(self.jobs_dir.iterdir()):  # made before the mark
            mark_jobs_dir(self.jobs_dir)
        self.allow_cpu_for_gpu = allow_cpu_for_gpu
        self.capacity = capacity  # processes at once (the queue); None: the CPU count
        self.nice = nice  # how far below the server's CPU priority jobs run (resources.py)

    # -- runtimes --

    def list_runtimes(self) -> list[Runtime]:
        return list(LOCAL_RUNTIMES)  # an MPI one without mpirun here: refused by name

    def get_runtime(self, name: str) -> Runtime:
        """A local runtime; one of the Trainer's that cannot run here is refused saying why
        (frameworks.unavailable); a preview then takes the Trainer's published runtime
        (backends/submit.lookup_runtime)."""
        why = unavailable(name)
        if why is not None:
            raise NotFound(why)
        return super().get_runtime(name)

    def runtime_packages(self, name: str) -> dict[str, str]:
        """The local runtime is this Python environment."""
        from importlib.metadata import distributions

        from packaging.utils import canonicalize_name

        if self.get_runtime(name) not in LOCAL_RUNTIMES:
            raise NotFound(unavailable(name) or f"runtime {name!r} is not available locally")
        return {
            canonicalize_name(d.metadata["Name"]): d.version
            for d in distributions()
            if d.metadata["Name"]
        }

    # -- submit --

    def _check_devices(self, spec: JobSpec) -> dict[str, str]:
        """Accelerators this machine cannot honour refused (accelerators.check), every kind
        alike."""
        c = spec.config
        return accelerators.check(c.requests, c.limits, self.allow_cpu_for_gpu)

    def submit(self, spec: JobSpec, notebook_path: str | None = None) -> Submitted:
        check_runnable(spec)  # a runtime, initializer and processes this machine can give
        env = {**job_env(spec), **self._check_devices(spec)}
        env.update(local_checkpoints(spec, self.jobs_dir))  # its lineage's folder, if it uses one
        refused = refusal(spec.requirements)  # a local run never changes installed packages
        if refused is not None:
            raise refused
        mounts = plan_mounts(spec)  # every volume honoured here, or an error before any start
        resources, resource_warnings = resources_record(spec)  # cores and memory per node
        gpus = gpu_count({"requests": spec.config.requests, "limits": spec.config.limits})
        shape = {"num_nodes": spec.nodes, "procs_per_node": spec.procs_per_node,
                 "procs_why": spec.procs.why, "gpus": gpus}  # fmt: skip
        need, machine = need_of({**shape, "env": env}), capacity(self.capacity)
        check_fits(need, shape, machine)  # never queued forever
        command = unwrap(training_command(spec))  # an MPI runtime's mpirun: the supervisor's
        command[0] = sys.executable  # "python" in the image; this environment's Python here
        job_dir = self.jobs_dir / spec.name
        outputs = final_folder(spec.folder, self.jobs_dir, spec.name)
        try:
            self.jobs_dir.mkdir(parents=True, exist_ok=True)
            job_dir.mkdir(mode=0o700)  # its record holds the env and parameters the user typed
        except FileExistsError:
            half = " (its submit did not finish: delete it to free the name)"
            raise BackendError(
                f"a job named {spec.name} exists already" + (half if half_made(job_dir) else ""),
                409,
                "AlreadyExists",
            ) from None
        except OSError as e:
            raise BackendError(f"cannot create the job directory {job_dir}: {e.strerror}") from None
        if outputs.is_dir() and any(outputs.iterdir()):
            job_dir.rmdir()
            raise BackendError(
                f"{outputs} holds the outputs of an earlier job named {spec.name}: choose another "
                "name, or move them",
                409,
                "AlreadyExists",
            )
        policy = spec.config.run_policy
        record = {
            "name": spec.name,
            "status": Status.QUEUED.value if policy and policy.suspend else Status.CREATED.value,
            "reason": "suspended: local jobs cannot be resumed"
            if policy and policy.suspend
            else None,
            "runtime": spec.runtime.name,
            "framework": spec.runtime.framework,  # the environment its nodes get
            "gpus": gpus,
            "num_nodes": spec.nodes,
            "procs_per_node": spec.procs_per_node,  # PET_NPROC_PER_NODE, as the cluster's
            "procs_why": spec.procs.why,
            "created": now(),
            "command": command,
            # an MPI runtime's: the mpirun that starts its processes (mpirun.py)
            **({"mpirun": mpirun()} if spec.runtime.mpi else {}),
            "env": env,
            "packages": spec.requirements,  # what it lacks is installed in its folder (installs.py)
            "pip_index_urls": spec.pip_index_urls,
            "provenance": provenance(spec, notebook_path),
            "outputs": str(outputs),
            "mounts": mounts,
            "resources": resources,
            "nice": self.nice,
            "active_deadline_seconds": policy.active_deadline_seconds if policy else None,
            "max_restarts": spec.max_restarts,  # the supervisor starts it again (restarts.py)
            "nodes": [{"index": k, "state": "Pending"} for k in range(spec.nodes)],
            "queue": {"need": [need.procs, need.gpus], "capacity": [machine.procs, machine.gpus]},
            "submitter": [os.getpid(), start_time(os.getpid())],  # until its supervisor starts
        }
        try:
            for k in range(spec.nodes):
                (job_dir / f"node-{k}.log").touch()
            (job_dir / RECORD_LOCK).touch(mode=0o600)
            if spec.workspace is not None:  # the parts the cluster would mount, for the bootstrap
                env[WORKSPACE_PARTS] = str(write_parts(spec.workspace, job_dir / "workspace"))
            write_record(job_dir, record)
        except OSError as e:
            shutil.rmtree(job_dir, ignore_errors=True)
            raise BackendError(f"cannot write the job's files in {job_dir}: {e.strerror}") from None
        warnings = (*local_warnings(spec), *resource_warnings)
        if policy and policy.suspend:
            mark_jobs_dir(self.jobs_dir)  # a workspace around it leaves it out
            return Submitted(spec.name, warnings)
        try:  # its absolute mounts (shared with the jobs that mount the same folder there)
            claim(job_dir, mounts)
            pid, started = launch(job_dir, need, machine)  # its place in line, its supervisor
        except BaseException:
            free_mounts(job_dir)
            shutil.rmtree(job_dir, ignore_errors=True)
            raise
        hand_over(self.jobs_dir, spec.name, pid, started)
        ours = {"supervisor_pid": pid, "supervisor_started": started}
        # unless it recorded itself (and maybe more) first
        update_record(job_dir, lambda r: r.get("supervisor_pid") or r.update(ours))
        mark_jobs_dir(self.jobs_dir)
        return Submitted(spec.name, warnings)

    # -- reading jobs --

    def _folder(self, name: str) -> Path:
        """Where job ``name`` lives, whether it is there or not (NotFound for no job's name)."""
        if not name or "/" in name or name.startswith(".") or name == LINEAGES:
            raise NotFound(f"no local job named {name!r}")
        return self.jobs_dir / name

    def _dir(self, name: str) -> Path:
        job_dir = self._folder(name)
        if not (job_dir / "job.json").is_file():
            raise NotFound(f"no local job named {name!r}")
        return job_dir

    def _record(self, name: str) -> dict:
        """The job's record (Unreadable, a 409 saying how to remove it, when it is not one)."""
        return settled(self._dir(name), name)

    def _info(self, record: dict) -> JobInfo:
        return JobInfo(
            name=record["name"],
            status=Status(record["status"]),
            backend=self.name,
            runtime=record["runtime"],
            num_nodes=record["num_nodes"],
            procs_per_node=record["procs_per_node"],
            procs_why=record.get("procs_why") if isinstance(record.get("procs_why"), str) else None,
            reason=record.get("reason"),
            nodes=[
                NodeState(n["index"], n["state"], n.get("reason"), n.get("exit_code"))
                for n in record.get("nodes", [])
            ],
            created=record.get("created"),
            finished=record.get("finished"),
            provenance=record.get("provenance", {}),
            failure=Failure.from_dict(record.get("failure")),
        )

    def _failing(self, name: str) -> str | None:
        """Which node failed and how, while the job's other nodes are given FAILURE_GRACE to
        end (the supervisor's FAILING file; None when there is none)."""
        try:
            with open_regular(self.jobs_dir / name / FAILING) as f:
                return f.read(800).decode("utf-8", "replace")[:200].strip() or None
        except OSError:
            return None

    def _last_output(self, record: dict) -> datetime | None:
        """When a node last wrote to its log (or the job started, before any did)."""
        if not record.get("started"):
            return None
        moments = [datetime.fromisoformat(record["started"].replace("Z", "+00:00")).timestamp()]
        for k in range(record["num_nodes"]):
            try:
                moments.append((self.jobs_dir / record["name"] / f"node-{k}.log").stat().st_mtime)
            except OSError:
                continue
        return datetime.fromtimestamp(max(moments), timezone.utc)

    def get_job(self, name: str) -> JobInfo:
        try:
            record = self._record(name)
            info = self._info(record)
            info.progress = read_progress(self.jobs_dir / name)
            info.checkpoint = read_checkpoint(self.jobs_dir / name)
            self.note_output(info, self._last_output(record))
            if info.status is Status.RUNNING:
                info.failing = self._failing(name)
            expired = self._expired(record)
        except Unreadable as e:  # listed as such, with how to remove it
            return unreadable_info(e, self.name)
        except (KeyError, TypeError, ValueError, AttributeError) as e:  # a value of a wrong shape
            return unreadable_info(
                Unreadable(name, f"job.json: {type(e).__name__}: {e}"), self.name
            )
        if expired:  # report the final state once, then delete (as on a cluster)
            self.delete(name)
        return info

    def list_jobs(self) -> list[JobInfo]:
        if not self.jobs_dir.is_dir():
            return []
        infos = []
        for job_dir in sorted(self.jobs_dir.iterdir()):
            try:
                info = self.get_job(job_dir.name)
            except (NotFound, BackendError):
                continue
            used = disk_use(job_dir)  # bounded (diskuse.py)
            if used is not None:
                info.disk_bytes, info.disk_partial = used
            infos.append(info)
        return sorted(infos, key=lambda i: i.created or "", reverse=True)

    @staticmethod
    def _expired(record: dict) -> bool:
        ttl = record.get("provenance", {}).get("kale-ext.io/ttl-seconds-after-finished")
        if ttl is None or not record.get("finished"):
            return False
        finished = datetime.fromisoformat(record["finished"].replace("Z", "+00:00"))
        return (datetime.now(timezone.utc) - finished).total_seconds() >= int(ttl)

    # -- logs and events --

    def read_logs(self, name: str, query: LogQuery) -> Iterator[LogLine]:
        record = self._record(name)
        node = query.node
        if node is not None and not 0 <= node < record["num_nodes"]:
            raise NotFound(f"job {name} has no node {node} (it has {record['num_nodes']})")
        nodes = range(record["num_nodes"]) if node is None else [node]
        if node is None and record.get("mpirun"):  # node 0, the launcher, has every rank's
            nodes = [0]  # lines (mpirun.py), as on a cluster
        done = Status(record["status"]).finished

        def ended() -> bool:  # read again while following: the job may end meanwhile
            return Status(self._record(name)["status"]).finished if query.follow else done

        yield from node_logs(self._dir(name), nodes, record["procs_per_node"], query, ended)

    def events(self, name: str) -> list[Event]:
        record = self._record(name)
        events = [Event(record["created"], "Normal", "Created", f"job {name} created")]
        if record.get("started"):
            shape = shape_text(record["num_nodes"], record["procs_per_node"])
            events.append(Event(record["started"], "Normal", "Started", f"started {shape}"))
        for restart in record.get("restarts") or []:
            events.append(Event(restart["time"], "Warning", "Restarted", restart["reason"]))
        if record.get("finished"):
            kind = "Normal" if record["status"] == "Complete" else "Warning"
            events.append(
                Event(
                    record["finished"],
                    kind,
                    record["status"],
                    record.get("reason") or record["status"],
                )
            )
        return events

    # -- delete --

    def delete(self, name: str, outputs: bool = False) -> str | None:
        if half_made(folder := self._folder(name)):  # an interrupted submit's
            shutil.rmtree(folder, ignore_errors=True)
            return None
        with acting_on(self._dir(name), name):  # a stop or delete under way ends first
            return self._remove(name, outputs)

    def _remove(self, name: str, outputs: bool) -> str | None:
        """Delete job ``name`` (its action lock held): what became of its outputs."""
        from .stop import delete_job

        note = delete_job(self.jobs_dir, name, outputs)
        forget(self, name)  # its notebook snapshot, kept for a rerun
        return note

    def prune_job(self, name: str, outputs: bool = False) -> str | None:
        """Delete job ``name`` if its record, read again under its action lock, says it has
        finished; a 409 when it has not, or when a stop or a delete holds it now (a prune does
        not wait for another action)."""
        with acting_on(self._dir(name), name, wait=0):
            record = self._record(name)
            if not Status(record["status"]).finished:
                raise not_finished(name, self._info(record).status_text)
            return self._remove(name, outputs)

    def stop(self, name: str, reason: str) -> None:
        from .stop import stop_job

        with acting_on(self._dir(name), name):  # a delete under way: NotFound once it is done
            stop_job(self._dir(name), reason)

    def job_source(self, name: str) -> str | None:
        return source_of(self._record(name).get("command", []))

    def outputs(self, name: str) -> JobOutputs:
        try:
            return listing(self._record(name), self._dir(name))
        except NotFound:
            return kept(self.jobs_dir, name)  # a deleted job's, kept

    def outputs_place(self, name: str) -> JobOutputs:
        try:  # its folder, unlisted (5,000 files took 0.35 s to list)
            return JobOutputs(self._record(name).get("outputs") or "", [])
        except NotFound:
            return kept(self.jobs_dir, name)  # a deleted job's, kept

    def copy_outputs(self, name: str, into: Path) -> JobOutputs:
        found = self.outputs(name)
        if not found.files or found.note:  # none, or still running: nothing final to copy
            raise BackendError(f"{name} has no outputs to copy yet ({found.note or 'none'})")
        try:
            shutil.copytree(found.location, into, symlinks=True, dirs_exist_ok=True)
        except OSError as e:
            raise BackendError(f"cannot copy the outputs of {name} into {into}: {e}") from None
        return JobOutputs(str(into), found.files, f"copied from {found.location}")
