"""One real IPython shell for the tests of the magics and the kernel context."""

import sys

import pytest
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config


@pytest.fixture(scope="session")
def shell():
    """A real IPython shell (history in memory; the test process keeps its own __main__)."""
    main = sys.modules.get("__main__")
    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    instance = InteractiveShell.instance(config=config)
    sys.modules["__main__"] = main
    yield instance
    instance.reset(new_session=True)  # close what the last test left open
