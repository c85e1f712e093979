"""Stage 1, compile: a tagged notebook → one self-contained training function in a real module.

    notebook.py (cells, tags as data) → transform.py (IPython → Python) → analysis.py (names)
    → parameters.py, entrypoint.py → packages.py (and their sources) → codegen.py (the module)

compiler.py ties them together: :func:`compile_notebook`. Nothing here imports a later stage.
"""

from .compiler import CompiledJob, compile_notebook, write_module

__all__ = ["CompiledJob", "compile_notebook", "write_module"]
