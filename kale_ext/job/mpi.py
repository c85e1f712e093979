"""MPI runtimes (``mlPolicy.mpi``: the Trainer's deepspeed-distributed and mlx-distributed): how
a job is launched on them, in the shape the Kubeflow SDK gives it.

Such a runtime has two replicated jobs. ``node`` pods run sshd; the ``launcher`` is the trainer
(the job ``TrainJob.spec.trainer`` overrides) and, with ``runLauncherAsNode``, one of the nodes.
Kubeflow Trainer v2.3's MPI plugin (``plugins/mpi/mpi.go``) mounts an SSH key Secret on every
pod and gives the launcher a hostfile at /etc/mpi/hostfile (a line per node, ``slots=`` its
processes) and the ``OMPI_MCA_*`` settings. The Kubeflow SDK 0.5 (``constants.MPI_COMMAND``)
starts the function as ``mpirun --hostfile /etc/mpi/hostfile`` followed by what each process
runs, writing its files under ``/home/mpiuser`` (``DEFAULT_MPI_USER_HOME``, the home of the
image's MPI user); kale_ext does the same with its own command (trainjob.BOOTSTRAP), so every
process installs what is missing, unpacks the workspace and runs the function. The processes
run on every pod, so the volumes kale_ext mounts (its workspace, outputs, the user's) go on both
jobs.
"""

from __future__ import annotations

from .runtimes import Runtime

HOSTFILE = "/etc/mpi/hostfile"
#: The Kubeflow SDK's MPI launch (constants.MPI_COMMAND without its bash script).
MPIRUN = ("mpirun", "--hostfile", HOSTFILE)
#: Where the SDK writes the function's file and its pip log (constants.DEFAULT_MPI_USER_HOME).
HOME = "/home/mpiuser"
LAUNCHER = "launcher"  # the replicated job that runs mpirun
NODE = "node"  # the replicated job of the other nodes (sshd), and the container the plugin uses


def launch(command: list[str]) -> list[str]:
    """The launcher's command: mpirun over the plugin's hostfile, each process running
    ``command``."""
    return [*MPIRUN, *command]


def launched(command: list | None) -> bool:
    """Whether a TrainJob's trainer ``command`` starts its processes through mpirun: an MPI job
    (the Kubeflow SDK's own test, ``utils.get_trainjob_node_step``)."""
    return bool(command) and command[0] == MPIRUN[0]


def node_of(step: str, index: int, mpi: bool) -> int | None:
    """Which of the job's nodes a pod of replicated job ``step`` (its completion ``index``) is,
    as the Kubeflow SDK counts them: for an MPI job the launcher is node 0 (mpirun runs there,
    so every rank's output is in its log; with ``runLauncherAsNode`` it is also one of the
    hostfile's hosts, and the Trainer makes numNodes - 1 ``node`` pods, at least 1) and ``node``
    pod k is node k + 1; otherwise ``node`` pod k is node k. None: not a training node's pod
    (an initializer's)."""
    if mpi and step == LAUNCHER:
        return 0 if index == 0 else None  # one launcher
    if step == NODE:
        return index + 1 if mpi else index
    return None


def pod_of(node: int, mpi: bool) -> tuple[str, int]:
    """The replicated job and completion index of the pod of ``node`` (:func:`node_of`'s
    inverse)."""
    if mpi:
        return (LAUNCHER, 0) if node == 0 else (NODE, node - 1)
    return NODE, node


def unwrap(command: list) -> list:
    """What each process runs: ``command`` without a :func:`launch` in front (as it is when
    there is none)."""
    n = len(MPIRUN)
    return list(command[n:]) if tuple(command[:n]) == MPIRUN else command


def patched_jobs(runtime: Runtime) -> tuple[str, ...]:
    """The replicated jobs whose pods run the function, so get kale_ext's volumes: the trainer's
    and, for an MPI runtime, the nodes mpirun reaches over SSH."""
    if runtime.mpi and NODE in runtime.replicated_jobs and runtime.trainer_job != NODE:
        return (runtime.trainer_job, NODE)
    return (runtime.trainer_job,)
