#!/usr/bin/env bash
# The system packages the MPI runtimes' runs need: Debian's Open MPI (`mpirun`, `orted`) and
# OpenSSH's server (`sshd`, which the runtimes' worker pods run; the process kubelet of the real
# control plane runs the real one). Installed with apt only when missing; as a non-root user
# without them, one line says what to install (the MPI tests then fail with that reason).
# No sshd is started as a service: the tests start their own, one per worker pod.
set -euo pipefail

missing=()
command -v mpirun >/dev/null 2>&1 || missing+=(openmpi-bin)
[ -x /usr/sbin/sshd ] || missing+=(openssh-server)
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ]; then
  echo "the MPI runs need: apt-get install -y ${missing[*]} (as root)" >&2
  exit 0
fi
echo "--- installing ${missing[*]} (apt)"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
