"""Server configuration for the Galata integration tests and the panel benchmarks.

No token, no XSRF check and a temporary root dir (galata's settings). The port is the one the
Playwright configuration found free for the run (`--ServerApp.port`); started by hand
(`jlpm start`), the server takes a port the OS picks and prints it.
"""

from jupyterlab.galata import configure_jupyter_server

configure_jupyter_server(c)  # noqa: F821
c.ServerApp.port = 0  # noqa: F821  (never a fixed port)
c.ServerApp.allow_root = True  # noqa: F821  (CI runs as root)
# Compile in the server's threads: no compile processes to start while a test waits for its
# first preview (pytest's TestCompileProcesses covers them).
c.KaleExtApp.compile_processes = 0  # noqa: F821
