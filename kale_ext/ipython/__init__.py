"""Front end: IPython magics (magics.py), the job monitor widget (widgets.py), and reading a
`%%trainjob` cell's context from the kernel (kernelcontext.py)."""
