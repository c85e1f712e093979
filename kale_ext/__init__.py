"""kale_ext: from a tagged Jupyter notebook to a distributed training job.

Importing this package is cheap: the Kubeflow SDK and jupyter_server load only when used.
"""

try:
    from ._version import __version__
except ImportError:  # a source checkout that was never installed
    __version__ = "0.0.0+unknown"

__all__ = [
    "JobFailed",
    "NoResult",
    "__version__",
    "compile_notebook",
    "get_job",
    "report",
    "run",
]


def report(step=None, **metrics):
    """Report training metrics from a job: one structured log line (see kale_ext.metrics)."""
    from .metrics import report as _report

    _report(step, **metrics)


def compile_notebook(*args, **kwargs):
    """Compile a notebook into one self-contained training function (see kale_ext.compiler)."""
    from .compile.compiler import compile_notebook as _compile

    return _compile(*args, **kwargs)


def get_job(name, backend=None):
    """The job named ``name`` (as the Kubeflow SDK's ``client.get_job``): ``.result()`` waits for
    what it returned, ``.outputs`` lists and loads its files (see kale_ext.runs.handle)."""
    from .runs.handle import job as _job

    return _job(name, backend)


def run(notebook, **options):
    """Submit a notebook as `kale-ext run` does (options as the REST API names them: nodes=2,
    parameters={...}; backend="local"); returns its job at once (see kale_ext.runs.handle)."""
    from .runs.handle import run as _run

    return _run(notebook, **options)


def __getattr__(name):
    if name in ("JobFailed", "NoResult"):  # the errors .result() raises
        from . import errors

        return getattr(errors, name)
    raise AttributeError(f"module 'kale_ext' has no attribute {name!r}")


def _jupyter_labextension_paths():
    return [{"src": "labextension", "dest": "kale-ext"}]


def _jupyter_server_extension_points():
    from .server.app import KaleExtApp

    return [{"module": "kale_ext", "app": KaleExtApp}]


def load_ipython_extension(ipython):
    """`%load_ext kale_ext`: the cell magics and the job monitor."""
    from .ipython.magics import load_ipython_extension as load

    load(ipython)
