"""The image's side of an MPI runtime's pods (image.py): the configs are read by the real ssh
and sshd (``ssh -G``, ``sshd -T``), and a real sshd started from them runs a session as a
process of the pod (its PATH and mounts)."""

from __future__ import annotations

import shlex
import subprocess
import sys

import pytest

from kale_ext.backends.local.ports import claim_port
from tests.harness.cluster.volumes import process_env
from tests.harness.controlplane import image


def _pod(hostname: str = "job-node-0-0", **spec) -> dict:
    return {"metadata": {"name": f"{hostname}-abcde", "namespace": "team"},
            "spec": {"hostname": hostname, "subdomain": "job", **spec}}  # fmt: skip


class _Objects:
    def __init__(self, **secrets):
        self.secrets = secrets

    def get(self, resource, namespace, name):
        assert (resource, namespace) == ("v1/secrets", "team")
        return self.secrets.get(name)


def test_the_pods_ssh_key_is_its_ssh_auth_secrets_volume(tmp_path):
    pod = _pod(volumes=[
        {"name": "token", "secret": {"secretName": "other"}},
        {"name": "mpi-ssh-auth", "secret": {"secretName": "job-mpi-ssh-auth"}},
    ])  # fmt: skip
    objects = _Objects(other={"type": "Opaque"}, **{"job-mpi-ssh-auth": {"type": image.SSH_AUTH}})
    volumes = {"token": tmp_path / "a", "mpi-ssh-auth": tmp_path / "b"}
    assert image.ssh_key(pod, objects, volumes) == tmp_path / "b"
    assert image.ssh_key(pod, _Objects(other={"type": "Opaque"}), volumes) is None
    assert image.ssh_key(_pod(), objects, volumes) is None


def test_the_ssh_client_reaches_each_pod_hostname_at_its_sshds_port(tmp_path):
    """``ssh -G`` prints what ssh would do: every name of a pod (short, under the subdomain,
    qualified) is 127.0.0.1 at that pod's port; host keys are not checked (the image's)."""
    config = tmp_path / "config"
    pods = {"job-node-0-0": _pod(), "job-node-0-1": _pod("job-node-0-1")}
    config.write_text(image.ssh_config({"job-node-0-0": 12001, "job-node-0-1": 12002}, pods))
    for host, port in (("job-node-0-0.job", 12001), ("job-node-0-1", 12002),
                       ("job-node-0-1.job.team.svc.cluster.local", 12002)):  # fmt: skip
        out = subprocess.run([image.SSH, "-G", "-F", str(config), host], capture_output=True,
                             text=True, check=True).stdout.splitlines()  # fmt: skip
        assert "hostname 127.0.0.1" in out and f"port {port}" in out, (host, out)
        assert "stricthostkeychecking false" in out and "userknownhostsfile /dev/null" in out
        assert "identitiesonly yes" in out  # the pod's key (-i), not this user's
    other = subprocess.run([image.SSH, "-G", "-F", str(config), "job-launcher-0-0.job"],
                           capture_output=True, text=True, check=True).stdout.splitlines()  # fmt: skip
    assert "hostname job-launcher-0-0.job" in other  # not a pod with an sshd: left as it is


def test_a_program_that_is_not_python_gets_the_mount_folders_in_its_argv_and_env():
    mounted = {"/etc/mpi": "/pods/a/volumes/mpi-hostfile", "/home/mpiuser/.ssh": "/pods/a/key"}
    argv = ["mpirun", "--hostfile", "/etc/mpi/hostfile", "python", "-c", "print('/etc/mpi')"]
    env = {"OMPI_MCA_orte_default_hostfile": "/etc/mpi/hostfile", "OTHER": "/etc/mpiX",
           "HOME": "/pods/a/home"}  # fmt: skip
    got_argv, got_env = image.native(argv, env, mounted)
    assert got_argv == ["mpirun", "--hostfile", "/pods/a/volumes/mpi-hostfile/hostfile", "python",
                        "-c", "print('/etc/mpi')"]  # fmt: skip
    assert got_env == {
        **env,
        "OMPI_MCA_orte_default_hostfile": "/pods/a/volumes/mpi-hostfile/hostfile",
    }
    python = [sys.executable, "/etc/mpi/hostfile"]  # Python has the shim: as it is
    assert image.native(python, env, mounted) == (python, env)
    assert image.sshd_file(["/usr/sbin/sshd", "-De", "-f", "/home/mpiuser/.sshd_config"]) == (
        "/home/mpiuser/.sshd_config"
    )
    assert image.sshd_file(["mpirun", "-f", "x"]) is None


def test_the_pods_hosts_file_names_only_the_pod_itself():
    text = image.hosts_file(_pod("job-launcher-0-0"))
    [own] = [line.split() for line in text.splitlines() if "job-launcher" in line]
    assert own == ["127.0.0.1", "job-launcher-0-0.job.team.svc.cluster.local",
                   "job-launcher-0-0.job.team.svc", "job-launcher-0-0.job.team",
                   "job-launcher-0-0.job", "job-launcher-0-0"]  # fmt: skip
    assert "job-node" not in text


def test_the_runtimes_user_decides_whether_mpirun_is_told_root_is_fine():
    assert image.runs_as_non_root(_pod(), {"securityContext": {"runAsUser": 1000}})
    assert image.runs_as_non_root(_pod(securityContext={"runAsUser": 1000}), {})
    assert not image.runs_as_non_root(_pod(securityContext={"runAsUser": 1000}),
                                      {"securityContext": {"runAsUser": 0}})  # fmt: skip
    assert not image.runs_as_non_root(_pod(), {})


@pytest.fixture
def pod_key(tmp_path):
    """A pod's mounted SSH key, as the MPI plugin's Secret gives it (mode 0640)."""
    key = tmp_path / "key"
    key.mkdir()
    subprocess.run(["ssh-keygen", "-q", "-t", "ecdsa", "-b", "521", "-N", "", "-f",
                    str(key / "id_rsa")], check=True)  # fmt: skip
    (key / "authorized_keys").write_bytes((key / "id_rsa.pub").read_bytes())
    (key / "id_rsa").chmod(0o640)
    return key


def test_a_session_of_the_real_sshd_runs_as_a_process_of_the_pod(tmp_path, pod_key):
    """The real sshd with the config the kubelet writes, reached through the ssh wrapper with
    the pod's key: the session has the pod's PATH (this interpreter first) and its mounts (the
    shim), and the sshd reads its quoted SetEnv back as written."""
    (tmp_path / "mount").mkdir()
    (tmp_path / "mount" / "f").write_text("in the pod's volume")
    home = tmp_path / "home"
    (home / "tmp").mkdir(parents=True)
    private = image.private_key(pod_key, tmp_path / "image" / "id_rsa")
    claim = claim_port()
    path = f"{sys.executable.rsplit('/', 1)[0]}:/usr/bin:/bin"
    env = image.mounts_env(process_env({}, home, {'/mnt/"odd" dir': str(tmp_path / "mount")}, path))
    config = tmp_path / "sshd_config"
    config.write_text(image.sshd_config(claim.port, private, pod_key / "authorized_keys",
                                        home / "sshd.pid", env))  # fmt: skip
    image.privilege_separation()
    shown = subprocess.run([image.SSHD, "-T", "-f", str(config)], capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    setenv = {line for line in shown.stdout.splitlines() if line.startswith("setenv ")}
    assert setenv == {f"setenv {k}={v}" for k, v in env.items()}  # quotes and all
    clients = tmp_path / "ssh.config"
    clients.write_text(image.ssh_config({"job-node-0-0": claim.port}, {"job-node-0-0": _pod()}))
    wrapper = image.ssh_wrapper(tmp_path / "bin", clients, private) / "ssh"
    sshd = subprocess.Popen([image.SSHD, "-De", "-f", str(config)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)  # fmt: skip
    try:
        script = "import sys; print(sys.executable); print(open('/mnt/\"odd\" dir/f').read())"
        out = subprocess.run([str(wrapper), "-o", "ConnectionAttempts=10", "job-node-0-0.job",
                              "python", "-c", shlex.quote(script)], capture_output=True, text=True,
                             timeout=60)  # fmt: skip
        assert out.returncode == 0, out.stderr
        assert out.stdout.splitlines() == [sys.executable, "in the pod's volume"], out
    finally:
        sshd.terminate()
        sshd.wait(10)
        claim.close()


def test_a_pods_processes_have_its_hostname_and_resolve_its_own_names_only(tmp_path):
    """What Open MPI reads to find itself in the hostfile: the hostname (UTS namespace) and
    the pod's names resolving to a local address (its /etc/hosts, in a mount namespace); this
    machine's hostname and /etc/hosts stay as they were."""
    assert image.cannot_enter_pod() is None  # CI runs as root
    hosts = tmp_path / "hosts"
    hosts.write_text(image.hosts_file(_pod("job-launcher-0-0")))
    before = (subprocess.run(["hostname"], capture_output=True, text=True).stdout,
              open("/etc/hosts").read())  # fmt: skip
    script = "hostname; getent hosts job-launcher-0-0.job; getent hosts job-node-0-0.job || echo no"
    out = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True,
                         preexec_fn=lambda: image.enter_pod("job-launcher-0-0", hosts))  # fmt: skip
    [name, own, other] = out.stdout.splitlines()
    assert name == "job-launcher-0-0" and own.split()[0] == "127.0.0.1" and other == "no", out
    after = (subprocess.run(["hostname"], capture_output=True, text=True).stdout,
             open("/etc/hosts").read())  # fmt: skip
    assert after == before
