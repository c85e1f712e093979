"""`%kale_sdk`: the notebook's own Kubeflow SDK calls through kale_ext, in this kernel.

    %kale_sdk [--backend local|kubernetes] [--notebook PATH]   every TrainerClient: kale_ext's
    %kale_sdk --off                                            the SDK's own again

See sdkbackend.py for what the TrainerClient then does.
"""

from __future__ import annotations

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_magic, magics_class
from IPython.core.magic_arguments import MagicArgumentParser

from ..errors import KaleExtError

PARSER = MagicArgumentParser(
    prog="%kale_sdk",
    description="Send this kernel's Kubeflow SDK TrainerClient calls (train, get_job_logs, "
    "wait_for_job_status, list_jobs, get_job, delete_job) through kale_ext.",
)
PARSER.add_argument("--backend", choices=("local", "kubernetes"),
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
            from .sdkbackend import stop_using_kale_ext, use_kale_ext
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
