"""What the image and the pod network give the pods of an MPI runtime (the Trainer's
deepspeed-distributed and mlx-distributed), for the process kubelet: their real Open MPI
``mpirun`` and real OpenSSH ``sshd`` run as on a cluster, and reach each other.

Such a pod mounts an SSH key: a Secret of type ``kubernetes.io/ssh-auth`` (the Trainer's MPI
plugin's, ``id_rsa``, ``id_rsa.pub`` and ``authorized_keys`` at the runtime's
``sshAuthMountPath``). Its image is the mpi-operator base image's SSH setup
(``build/base/Dockerfile`` in kubeflow/mpi-operator), stood in for here:

- the client (``/etc/ssh/ssh_config``: ``StrictHostKeyChecking no``, ``UserKnownHostsFile
  /dev/null``): an ``ssh`` first on the pod's ``PATH`` runs ``/usr/bin/ssh -F CONFIG -i KEY``,
  CONFIG being the pod network's names (:func:`ssh_config`: each pod hostname of the job's
  subdomain, short or qualified, is 127.0.0.1 and the port its sshd listens on here);
- the server (``/home/mpiuser/.sshd_config``: ``Port 2222``, ``HostKey`` the mounted key,
  ``PidFile`` in the home, ``StrictModes no``): the file the runtime's ``sshd -f`` names is
  written in the pod's folder (:func:`sshd_config`), its port one claimed for this pod's
  hostname (every worker pod listens on 2222), the authorized keys the mounted ones (the image's
  default, ``~/.ssh/authorized_keys``, is its user's home), and ``SetEnv`` the environment a
  process of this pod starts from (PATH with this interpreter's folder first, its HOME and
  TMPDIR, the mounts' Python shim), so what ``orted`` starts through ssh sees the pod's files;
- the key: the Secret's ``id_rsa`` has mode 0640, fine on a cluster where the process (uid
  1000) is not the file's owner (root); here the process owns it and ssh refuses a private key
  others may read, so ssh and sshd get a 0600 copy (:func:`private_key`);
- mount paths in a program that is not Python (``mpirun --hostfile /etc/mpi/hostfile``,
  ``OMPI_MCA_orte_default_hostfile``, ``sshd -f``): the argument or variable naming a path
  under a mount names the mount's folder (:func:`native`; Python reads them through the shim);
- the pod's own name: the pod's processes get its hostname (a UTS namespace) and an
  ``/etc/hosts`` naming it 127.0.0.1 (a mount namespace), as a kubelet's does: Open MPI takes
  the hostfile line that resolves to one of its own addresses as itself (``runLauncherAsNode``:
  the launcher runs rank 0 without ssh), and ssh for every other one. Namespaces need root (CI
  runs as root); otherwise the container fails to start, saying so;
- the user: the runtime runs its containers as uid 1000 (``mpiuser``); here they run as the
  harness's user. As root, the launcher's container gets ``OMPI_ALLOW_RUN_AS_ROOT=1`` and
  ``OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1`` (what running as mpiuser would not need), and sshd its
  privilege separation folder (``/run/sshd``, which the image makes).

The job is as the Trainer made it: its command and the MPI plugin's ``OMPI_MCA_*`` variables
(the hostfile, ``orte_keep_fqdn_hostnames``, ``orte_set_default_slots``, ``plm_rsh_args -o
ConnectionAttempts=10``; no ``plm_rsh_agent``, so mpirun runs the ``ssh`` on PATH) are passed on
as they are, but for the mount paths. The kubelet probes no readiness (a worker is Ready once
its sshd has started, maybe before it listens): the plugin's ConnectionAttempts bridges that,
as it does a cluster's DNS delay.
"""

from __future__ import annotations

import ctypes
import errno
import os
import shlex
import shutil
import sys
from pathlib import Path

SSH_AUTH = "kubernetes.io/ssh-auth"
SSHD = "/usr/sbin/sshd"
SSH = "/usr/bin/ssh"
PRIVILEGE_SEPARATION = "/run/sshd"
AS_ROOT = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
CLONE_NEWNS, CLONE_NEWUTS = 0x00020000, 0x04000000
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
_libc = ctypes.CDLL(None, use_errno=True)


def ssh_key(pod: dict, objects, volumes: dict[str, Path]) -> Path | None:
    """The folder of the pod's SSH key (the Secret volume of type ``kubernetes.io/ssh-auth``);
    None: not a pod that reaches others through ssh."""
    ns = pod["metadata"]["namespace"]
    for volume in pod["spec"].get("volumes") or []:
        name = (volume.get("secret") or {}).get("secretName")
        secret = objects.get("v1/secrets", ns, name) if name else None
        if secret and secret.get("type") == SSH_AUTH and volume["name"] in volumes:
            return Path(volumes[volume["name"]])
    return None


def hostname(pod: dict) -> str:
    return pod["spec"].get("hostname") or pod["metadata"]["name"]


def names(pod: dict, host: str | None = None) -> list[str]:
    """The names of pod hostname ``host`` (the pod's own by default) under the pod's subdomain,
    qualified as a cluster's DNS answers them, longest first."""
    host, sub = host or hostname(pod), pod["spec"].get("subdomain")
    if not sub:
        return [host]
    ns = pod["metadata"]["namespace"]
    return [f"{host}.{sub}.{ns}.svc.cluster.local", f"{host}.{sub}.{ns}.svc",
            f"{host}.{sub}.{ns}", f"{host}.{sub}", host]  # fmt: skip


def hosts_file(pod: dict) -> str:
    """The pod's ``/etc/hosts``: localhost and its own names, 127.0.0.1 (its address here)."""
    return (
        f"127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost\n127.0.0.1\t{' '.join(names(pod))}\n"
    )


def ssh_config(ports: dict[str, int], pods: dict[str, dict]) -> str:
    """The ssh client's config for one subdomain: each pod hostname (``ports``: its sshd's port
    here; ``pods``: a pod of the subdomain, for its names) is 127.0.0.1 at that port."""
    lines = []
    for host, port in sorted(ports.items()):
        lines += [f"Host {' '.join(names(pods[host], host))}", "    HostName 127.0.0.1",
                  f"    Port {port}"]  # fmt: skip
    # the image's client has the pod's key only; this machine's user may have others
    lines += ["Host *", "    StrictHostKeyChecking no", "    UserKnownHostsFile /dev/null",
              "    IdentitiesOnly yes"]  # fmt: skip
    return "\n".join(lines) + "\n"


def _quoted(text: str) -> str:
    """One sshd_config argument (argv_split: double quotes, ``\\"`` and ``\\\\`` escaped)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def sshd_config(port: int, host_key: Path, authorized_keys: Path, pid: Path,
                env: dict[str, str]) -> str:  # fmt: skip
    """The image's ``.sshd_config`` for this pod, its sessions starting from ``env``."""
    setenv = " ".join(_quoted(f"{k}={v}") for k, v in sorted(env.items()))
    return (f"Port {port}\nListenAddress 127.0.0.1\nHostKey {_quoted(str(host_key))}\n"
            f"PidFile {_quoted(str(pid))}\nStrictModes no\n"
            f"AuthorizedKeysFile {_quoted(str(authorized_keys))}\nSetEnv {setenv}\n")  # fmt: skip


def private_key(key_folder: Path, copy: Path) -> Path:
    """A 0600 copy of the mounted private key (ssh refuses one its owner's group may read)."""
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_bytes((key_folder / "id_rsa").read_bytes())
    copy.chmod(0o600)
    return copy


def ssh_wrapper(folder: Path, config: Path, key: Path) -> Path:
    """A folder for the front of PATH whose ``ssh`` is the image's client: the system's, with
    the subdomain's names and the pod's key."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "ssh"
    script.write_text(f'#!/bin/sh\nexec {SSH} -F {shlex.quote(str(config))} '
                      f'-i {shlex.quote(str(key))} "$@"\n')  # fmt: skip
    script.chmod(0o755)
    return folder


def sshd_file(argv: list[str]) -> str | None:
    """The config file the container's sshd is told to read (``-f PATH``); None: not sshd."""
    if not argv or argv[0] != SSHD:
        return None
    for i, arg in enumerate(argv[:-1]):
        if arg == "-f" or (arg.startswith("-") and not arg.startswith("--") and arg.endswith("f")):
            return argv[i + 1]
    return None


def _under(text: str, mounted: dict[str, str]) -> str:
    for mount, folder in sorted(mounted.items(), key=lambda m: -len(m[0])):
        base = mount.rstrip("/")
        if base and (text == base or text.startswith(base + "/")):
            return folder + text[len(base) :]
    return text


def native(argv: list[str], env: dict[str, str], mounted: dict[str, str]):
    """A program that is not Python (no shim) is given the folders of the mount paths its
    arguments and environment name: (argv, env)."""
    if not argv or argv[0] == sys.executable:
        return argv, env
    return ([_under(a, mounted) for a in argv],
            {k: _under(v, mounted) if v.startswith("/") else v for k, v in env.items()})  # fmt: skip


def runs_as_non_root(pod: dict, container: dict) -> bool:
    """Whether the pod spec asks for a user other than root (the runtime's ``runAsUser: 1000``)."""
    for context in (container.get("securityContext"), pod["spec"].get("securityContext")):
        if context and context.get("runAsUser") is not None:
            return context["runAsUser"] != 0
    return False


def enter_pod(host: str, hosts: Path) -> None:
    """In the container's process before exec: its own hostname and ``/etc/hosts``."""
    if _libc.unshare(CLONE_NEWUTS | CLONE_NEWNS) != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"the pod's hostname needs a UTS and mount namespace (root): "
                         f"{os.strerror(e)}")  # fmt: skip
    name = host.encode()
    for call in (lambda: _libc.sethostname(name, len(name)),
                 lambda: _libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None),
                 lambda: _libc.mount(str(hosts).encode(), b"/etc/hosts", None, MS_BIND, None)):  # fmt: skip
        if call() != 0:
            e = ctypes.get_errno() or errno.EPERM
            raise OSError(e, f"the pod's hostname and /etc/hosts: {os.strerror(e)}")


def cannot_enter_pod() -> str | None:
    """Why a pod cannot get its own hostname here (None: it can)."""
    if os.geteuid() != 0:
        return (
            "an MPI runtime's pod needs its own hostname and /etc/hosts (UTS and mount "
            "namespaces): run the control plane as root"
        )
    return None


def privilege_separation() -> None:
    """As root, sshd wants its privilege separation folder (the image makes it)."""
    if os.geteuid() == 0:
        os.makedirs(PRIVILEGE_SEPARATION, mode=0o755, exist_ok=True)


def have(program: str) -> str | None:
    """Why ``program`` cannot run here (None: it can)."""
    if shutil.which(program) or os.access(program, os.X_OK):
        return None
    return f"{program} is not installed: apt-get install -y openmpi-bin openssh-server"


def mounts_env(env: dict[str, str]) -> dict[str, str]:
    """The part of a process's environment a session started by sshd needs to see the pod as a
    process of it does (PATH, HOME, TMPDIR, LANG, the shim's PYTHONPATH and mounts)."""
    keep = ("PATH", "HOME", "TMPDIR", "LANG", "PIP_NO_INDEX", "PYTHONPATH", "EMULATED_MOUNTS")
    return {k: env[k] for k in keep if k in env}
