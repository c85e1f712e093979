"""Front end: IPython magics (magics.py); the job monitor (widgets.py, fed by the state model in
monitor.py, shown by views.py with plots.py's charts); and reading a `%%trainjob` cell's context
from the kernel (kernelcontext.py, with definitions.py, kernelimports.py and problems.py)."""
