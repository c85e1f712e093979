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
