"""A finished rank's end (kale_ext/compile/leave.py), run as the job runs its module: in a
process of its own. A teardown abort of the interpreter is stood in for by an object whose
finaliser aborts the process, as Gloo's threads do when a torch.distributed process exits."""

from __future__ import annotations

import signal

import pytest

from tests.compile.test_excepthook import run_job
from tests.conftest import notebook

#: Kept on builtins, the object is finalised in the interpreter's teardown, after atexit.
ABORTS_AT_TEARDOWN = (
    "import builtins, os\n"
    "class Teardown:\n"
    "    def __del__(self):\n"
    "        os.abort()\n"
    "builtins._kale_ext_test_teardown = Teardown()\n"
)
WRITES_AT_EXIT = (
    "import atexit, threading, time\n"
    "def late():\n"
    "    time.sleep(0.2)\n"
    "    print('thread done', flush=True)\n"
    "threading.Thread(target=late).start()\n"
    "atexit.register(lambda: print('atexit ran'))\n"
    "print('unflushed', end='')\n"
)


def test_a_torch_distributed_rank_that_returned_skips_the_teardown_abort(tmp_path):
    nb = notebook("import torch.distributed\n" + ABORTS_AT_TEARDOWN)
    done = run_job(nb, tmp_path)
    assert done.returncode == 0, done.stderr


def test_without_torch_distributed_python_ends_the_process_as_ever(tmp_path):
    done = run_job(notebook(ABORTS_AT_TEARDOWN), tmp_path)
    assert done.returncode == -signal.SIGABRT  # the stand-in aborts: the test sees teardown


def test_threads_atexit_and_buffered_output_are_not_lost(tmp_path):
    done = run_job(notebook("import torch.distributed\n" + WRITES_AT_EXIT), tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["unflushedthread done", "atexit ran"]


@pytest.mark.parametrize(
    ("cell", "code"), [("raise KeyError('x')", 1), ("import sys\nsys.exit(3)", 3)]
)
def test_a_failing_function_still_fails(tmp_path, cell, code):
    done = run_job(notebook("import torch.distributed\n" + cell), tmp_path)
    assert done.returncode == code


#: mpi4py's MPI module as a rank that started MPI has it (mpi4py itself need not be installed):
#: it says when it is finalized, after the atexit functions.
MPI_STARTED = (
    "import atexit, sys, types\n"
    "mpi = types.ModuleType('mpi4py.MPI')\n"
    "mpi.done = False\n"
    "mpi.Is_initialized = lambda: True\n"
    "mpi.Is_finalized = lambda: mpi.done\n"
    "def finalize():\n"
    "    mpi.done = True\n"
    "    print('MPI finalized', flush=True)\n"
    "mpi.Finalize = finalize\n"
    "sys.modules['mpi4py.MPI'] = mpi\n"
    "atexit.register(lambda: print('atexit ran', flush=True))\n"
)


def test_a_rank_that_started_mpi_finalizes_it_before_it_leaves(tmp_path):
    """mpi4py finalizes MPI in the C-level teardown the leave skips, and mpirun fails a rank
    that ends without MPI_Finalize (DeepSpeed's init_distributed starts MPI through mpi4py)."""
    done = run_job(notebook("import torch.distributed\n" + MPI_STARTED), tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["atexit ran", "MPI finalized"]
