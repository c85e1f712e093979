"""How a compiled module's process ends once the job's function has returned.

A process that loaded ``torch.distributed`` can abort in the interpreter's own teardown, after
the training is over: Gloo's worker threads still hold tensors whose destruction takes the GIL
of an interpreter being torn down, and the process dies of SIGABRT ("terminate called without an
active exception"), even after ``destroy_process_group()``. torchrun then fails the node, and a
job whose every rank finished would be recorded Failed (pytorch/pytorch#190489, #179291).

So, when the function has returned and ``torch.distributed`` was loaded, :func:`_kale_ext_leave`
ends the process as Python would, then skips only the C-level teardown: it waits for the
threads Python waits for (non-daemon ones), runs the ``atexit`` functions (logging's flush,
MLflow's end of run, torch's own), finalizes MPI when mpi4py started it (mpi4py finalizes it in
the C-level teardown, and mpirun fails a rank that leaves without: DeepSpeed's
``init_distributed()`` starts MPI through mpi4py on the MPI runtimes), flushes stdout and
stderr, and leaves with ``os._exit(0)``.
A function that raised or called ``sys.exit`` ends as before (the excepthook's way), and a
process that never loaded ``torch.distributed`` ends as Python ends it.

codegen copies the function's source verbatim: the training image needs no kale_ext. Standard
library only, and only inside the function.
"""

from __future__ import annotations


def _kale_ext_leave():  # kale_ext: a finished rank skips torch's teardown (compile/leave.py)
    import atexit
    import os
    import sys
    import threading

    if "torch.distributed" not in sys.modules:
        return  # nothing to fear: Python's own end
    main = threading.main_thread()
    for thread in threading.enumerate():
        if thread is not main and not thread.daemon:
            thread.join()  # as Python waits for them before it exits
    atexit._run_exitfuncs()
    mpi = sys.modules.get("mpi4py.MPI")  # mpirun fails a rank that ends without MPI_Finalize
    if mpi is not None and mpi.Is_initialized() and not mpi.Is_finalized():
        mpi.Finalize()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed or broken stream: nothing more to write
            pass
    os._exit(0)
