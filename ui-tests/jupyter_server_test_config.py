"""Server configuration for the Galata integration tests.

Opens a server on port 8888 with no token, no XSRF check and a temporary root dir.
"""

from jupyterlab.galata import configure_jupyter_server

configure_jupyter_server(c)  # noqa: F821
c.ServerApp.allow_root = True  # noqa: F821  (CI runs as root)
# Compile in the server's threads: no compile processes to start while a test waits for its
# first preview (pytest's TestCompileProcesses covers them).
c.KaleExtApp.compile_processes = 0  # noqa: F821
