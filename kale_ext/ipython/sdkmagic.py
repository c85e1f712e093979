"""`%kale_sdk` and ``use_kale_ext``: the notebook's own Kubeflow SDK calls through kale_ext, in
this kernel.

    %kale_sdk [--backend auto|local|kubernetes] [--notebook PATH]   every TrainerClient: kale_ext's
    %kale_sdk --off                                                 the SDK's own again

See sdkbackend.py for what the TrainerClient then does.
"""

from __future__ import annotations

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_magic, magics_class
from IPython.core.magic_arguments import MagicArgumentParser

from ..errors import KaleExtError
from ..job.defaults import BACKENDS
from .sdkbackend import KaleExtSdkBackend, KaleExtSdkError

PARSER = MagicArgumentParser(
    prog="%kale_sdk",
    description="Send this kernel's Kubeflow SDK TrainerClient calls (train, get_job_logs, "
    "wait_for_job_status, list_jobs, get_job, delete_job) through kale_ext.",
)
PARSER.add_argument("--backend", choices=BACKENDS,
                    help="where jobs run (default: as the magics choose)")  # fmt: skip
PARSER.add_argument("--notebook", metavar="PATH",
                    help="the notebook file (default: the kernel's own)")  # fmt: skip
PARSER.add_argument("--off", action="store_true", help="TrainerClients are the SDK's own again")


@magics_class
class SdkMagics(Magics):
    @line_magic
    def kale_sdk(self, line: str):
        try:
            args = PARSER.parse_argstring(line)
        except UsageError as e:
            raise UsageError(f"%kale_sdk: {e}") from None
        try:
            import kubeflow.trainer  # noqa: F401 (the SDK, installed)
        except ImportError as e:
            raise UsageError(f"%kale_sdk: the Kubeflow SDK is not installed ({e})") from None
        if args.off:
            stop_using_kale_ext()
            print("TrainerClients made from now on are the Kubeflow SDK's own")
            return None
        try:
            from ..backends.choose import choose_backend
            from ..job.defaults import load

            backend, why = choose_backend(args.backend, load())
            use_kale_ext(backend=backend, shell=self.shell, notebook=args.notebook)
        except (KaleExtError, ImportError) as e:
            raise UsageError(f"%kale_sdk: {e}") from None
        print(f"TrainerClient calls in this kernel go through kale_ext's {backend.name} "
              f"backend ({why}); %kale_sdk --off to stop")  # fmt: skip
        return None


# ---------------------------------------------------------------------------------------------
# Giving the kernel's TrainerClients a kale_ext backend

_ORIGINAL_INIT = "_kale_ext_original_init"


def use_kale_ext(client=None, backend=None, shell=None, notebook=None) -> KaleExtSdkBackend:
    """Give ``client`` (None: every ``TrainerClient`` of this kernel: those in its namespace,
    and every one made later) a kale_ext backend: ``backend`` (a kale_ext backend; None: the
    one the defaults choose, as the magics do). ``notebook``: the notebook file (None: the
    kernel's own)."""
    from kubeflow.trainer import TrainerClient

    from ..backends.choose import choose_backend
    from ..job.defaults import load
    from .sdkbackend import KaleExtSdkBackend

    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()
    if backend is None:
        backend, _ = choose_backend(None, load())
    sdk_backend = KaleExtSdkBackend(backend, shell, notebook)
    if client is not None:
        if not isinstance(client, TrainerClient):
            raise KaleExtSdkError(f"use_kale_ext: {type(client).__name__} is not a TrainerClient")
        client.backend = sdk_backend
        return sdk_backend
    original = TrainerClient.__dict__.get(_ORIGINAL_INIT, TrainerClient.__init__)

    def __init__(self, backend_config=None):  # noqa: N807 (the SDK's own constructor's name)
        self.backend = sdk_backend

    setattr(TrainerClient, _ORIGINAL_INIT, original)
    TrainerClient.__init__ = __init__
    for value in list((getattr(shell, "user_ns", None) or {}).values()):
        if isinstance(value, TrainerClient):
            value.backend = sdk_backend
    return sdk_backend


def stop_using_kale_ext() -> None:
    """TrainerClients made from now on are the SDK's own again."""
    from kubeflow.trainer import TrainerClient

    original = TrainerClient.__dict__.get(_ORIGINAL_INIT)
    if original is not None:
        TrainerClient.__init__ = original
        delattr(TrainerClient, _ORIGINAL_INIT)
