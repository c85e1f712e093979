"""Every version the control plane is built from: the one place to change them.

- Kubeflow Trainer v2.3.0 is what kale_ext targets (its CRDs, runtimes and PyPI models).
- JobSet v0.12.0: what Trainer v2.3.0's go.mod requires (``sigs.k8s.io/jobset v0.12.0``).
- Kubernetes v1.36.2: Trainer v2.3.0 builds against ``k8s.io/* v0.36.2`` (client-go, api,
  apimachinery), so the API server, controller manager and scheduler are the matching 1.36 patch.
  ``k8s.io/kubernetes`` has ``replace`` lines for its staging repos: each becomes its published
  ``v0.36.2`` in a go.mod of our own (``STAGING``).
- Kueue v0.17.0 (stretch): serves ``kueue.x-k8s.io/v1beta2`` and integrates TrainJobs; the only
  version the module proxy here lists. It is built against Trainer v2.2.0's API types and
  ``k8s.io/* v0.35.3`` (a TrainJob of v2.3.0 decodes the same for what Kueue reads).
- etcd v3.6.8: the version Kubernetes 1.36 ships and supports (kubeadm's
  ``SupportedEtcdVersion`` for 1.34-1.36 in ``cmd/kubeadm/app/constants``; its go.mod's etcd
  client is 3.6.8 too). Debian's etcd-server 3.4.23 is below kubeadm's minimum for an
  external etcd (``MinExternalEtcdVersion``, 3.5.24), so it is not used. Built from
  ``go.etcd.io/etcd/server/v3``'s ``etcdmain`` in a go.mod of our own, as that module has
  ``replace`` lines too.

A binary is rebuilt only when its component's entry here changes (it is cached under a folder
named for the entry: ``build.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

KUBERNETES = "v1.36.2"
STAGING = "v0.36.2"  # the published version of each k8s.io/<staging> repo of KUBERNETES
JOBSET = "v0.12.0"
TRAINER = "v2.3.0"
ETCD = "v3.6.8"
KUEUE = "v0.17.0"  # serves kueue.x-k8s.io/v1beta2; the newest version the module proxy lists

#: k8s.io/kubernetes' staging repos (its go.mod's replace lines), replaced by STAGING.
STAGING_REPOS = (
    "api", "apiextensions-apiserver", "apimachinery", "apiserver", "cli-runtime", "client-go",
    "cloud-provider", "cluster-bootstrap", "code-generator", "component-base",
    "component-helpers", "controller-manager", "cri-api", "cri-client", "cri-streaming",
    "csi-translation-lib", "dynamic-resource-allocation", "endpointslice", "externaljwt", "kms",
    "kube-aggregator", "kube-controller-manager", "kube-proxy", "kube-scheduler", "kubectl",
    "kubelet", "metrics", "mount-utils", "pod-security-admission", "sample-apiserver",
    "sample-cli-plugin", "sample-controller", "streaming",
)  # fmt: skip


@dataclass(frozen=True)
class Component:
    """One build: ``module@version``, the packages that become binaries (by binary name), and
    how: ``install`` (``go install pkg@version``: the module has no replace lines) or ``gomod``
    (a go.mod of our own requiring the module, with ``replace`` lines and maybe a main.go)."""

    name: str
    module: str
    version: str
    binaries: dict[str, str]  # binary name → package path
    how: str = "install"
    replace: dict[str, str] | None = None  # module → module version
    main: str | None = None  # a main.go of our own (its package is the go.mod's module)
    ldflags: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """The cache folder's name: changes whenever what is built changes."""
        return f"{self.name}-{self.version}"


def _version_ldflags(version: str) -> tuple[str, ...]:
    major, minor = version.lstrip("v").split(".")[:2]
    base = "k8s.io/component-base/version"
    return (f"-X {base}.gitVersion={version}", f"-X {base}.gitMajor={major}",
            f"-X {base}.gitMinor={minor}", f"-X {base}.gitTreeState=clean")  # fmt: skip


COMPONENTS = (
    Component(
        "etcd", "go.etcd.io/etcd/server/v3", ETCD, {"etcd": "."}, how="gomod",
        main='package main\n\nimport (\n\t"os"\n\n\t"go.etcd.io/etcd/server/v3/etcdmain"\n)\n\n'
             "func main() { etcdmain.Main(os.Args) }\n",
    ),
    Component(
        "kubernetes", "k8s.io/kubernetes", KUBERNETES,
        {b: f"k8s.io/kubernetes/cmd/{b}"
         for b in ("kube-apiserver", "kube-controller-manager", "kube-scheduler")},
        how="gomod", replace={f"k8s.io/{r}": STAGING for r in STAGING_REPOS},
        ldflags=_version_ldflags(KUBERNETES),
    ),
    # `go install sigs.k8s.io/jobset@v0.12.0` asks the proxy for the module's version list (to
    # warn of a deprecation), which the proxy may refuse (403): built from a go.mod instead.
    Component("jobset", "sigs.k8s.io/jobset", JOBSET, {"jobset": "sigs.k8s.io/jobset"},
              how="gomod"),
    Component(
        "trainer", "github.com/kubeflow/trainer/v2", TRAINER,
        {"trainer-controller-manager": "github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager"},
    ),
    Component("kueue", "sigs.k8s.io/kueue", KUEUE, {"kueue": "sigs.k8s.io/kueue/cmd/kueue"},
              how="gomod"),
)  # fmt: skip

BY_NAME = {c.name: c for c in COMPONENTS}
