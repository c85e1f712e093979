"""kale_ext: from a tagged Jupyter notebook to a distributed training job.

Importing this package is cheap: the Kubeflow SDK and jupyter_server load only when used.
"""

try:
    from ._version import __version__
except ImportError:  # a source checkout that was never installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__", "compile_notebook", "report"]


def report(step=None, **metrics):
    """Report training metrics from a job: one structured log line (see kale_ext.metrics)."""
    from .metrics import report as _report

    _report(step, **metrics)


def compile_notebook(*args, **kwargs):
    """Compile a notebook into one self-contained training function (see kale_ext.compiler)."""
    from .compile.compiler import compile_notebook as _compile

    return _compile(*args, **kwargs)


def _jupyter_labextension_paths():
    return [{"src": "labextension", "dest": "kale-ext"}]


def _jupyter_server_extension_points():
    from .server.app import KaleExtApp

    return [{"module": "kale_ext", "app": KaleExtApp}]


def load_ipython_extension(ipython):
    """`%load_ext kale_ext`: the cell magics and the job monitor."""
    from .ipython.magics import load_ipython_extension as load

    load(ipython)
