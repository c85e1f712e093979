"""Errors that point at notebook cells, installed by every compiled module when it is imported.

The generated module carries its line map (module line → notebook cell and line) and the source
of :func:`_kale_ext_errors`, copied verbatim by codegen: the module stays self-contained (the
training image needs no kale_ext). Imported, it

- makes stdout and stderr one stream under torchrun, whose ``--tee`` writes them to two files
  and tails each on its own (a rank's lines would come out of order);
- installs an excepthook that prints, once per failing process, ``cell 3 ("training"), line 2:
  KeyError: 'label'`` followed by the traceback, whose frames of the module name their cell and
  line (library frames stay as they are);
- names the cell and line of a ``sys.exit(3)`` too (the function it returns, which the module's
  launcher calls);
- records that failure as JSON in torchrun's ``TORCHELASTIC_ERROR_FILE`` (the format of
  ``torch.distributed.elastic``'s ``@record``, plus a ``kale_ext`` object), and on Kubernetes in
  the container's termination message, so the job's failure summary names the cell.

Only the standard library is used, and only inside the function (one module-level name).
"""

from __future__ import annotations

#: The error record's key for kale_ext's own facts (beside torch's "message").
RECORD_KEY = "kale_ext"
#: Kubernetes reads a container's termination message from here (at most 4096 bytes).
TERMINATION_LOG = "/dev/termination-log"


def _kale_ext_errors(module_globals, notebook, cells):  # kale_ext: errors name notebook cells
    import bisect
    import json
    import os
    import re
    import sys
    import time
    import traceback

    firsts = [c[0] for c in cells]  # cells: (first line, count, index, id, label, lines or None)

    def cell_at(line):
        i = bisect.bisect_right(firsts, line) - 1
        if i < 0 or line >= cells[i][0] + cells[i][1]:
            return None
        first, _, index, cell_id, label, lines = cells[i]
        return index, cell_id, label, lines[line - first] if lines else line - first + 1

    def where(found):
        return f'cell {found[0] + 1} ("{found[2]}"), line {found[3]}'

    def chain(value):
        seen = []
        while value is not None and not any(value is s for s in seen):
            seen.append(value)
            value = value.__cause__ or (None if value.__suppress_context__ else value.__context__)
        return seen

    def ours(tb):  # (filename, cell) of this module's frames, innermost last
        out = []
        while tb is not None:
            if tb.tb_frame.f_globals is module_globals:
                out.append((tb.tb_frame.f_code.co_filename, cell_at(tb.tb_lineno)))
            tb = tb.tb_next
        return out

    def describe(etype, value):
        name = etype.__qualname__
        if etype.__module__ not in ("builtins", "__main__"):
            name = f"{etype.__module__}.{name}"
        try:
            text = str(value).strip().splitlines()
        except Exception:
            text = ["<unprintable>"]
        return (f"{name}: {text[0]}" if text else name)[:300]

    frame = re.compile(r'  File "(.*)", line (\d+), in (.*)\n')

    def render(etype, value, tb, files):
        out = []
        for chunk in traceback.format_exception(etype, value, tb):
            m = frame.match(chunk)
            if m and m.group(1) in files:
                found = cell_at(int(m.group(2)))
                if found is None:
                    if m.group(3) == "<module>":
                        continue  # the module's own launcher lines
                else:
                    head = f'  File "{notebook}", {where(found)}, in {m.group(3)}\n'
                    chunk = head + chunk[m.end() :]
            out.append(chunk)
        return "".join(out)

    def record(found, exception, text):
        env = os.environ
        info = {
            "headline": f"{where(found)}: {exception}",
            "exception": exception,
            "cell_index": found[0],
            "cell_id": found[1],
            "label": found[2],
            "line": found[3],
            # torchrun's, else Open MPI's (an MPI runtime's rank, started by mpirun)
            "rank": int(env.get("RANK", env.get("OMPI_COMM_WORLD_RANK", "0"))),
            "local_rank": int(env.get("LOCAL_RANK", env.get("OMPI_COMM_WORLD_LOCAL_RANK", "0"))),
            "node": int(env.get("GROUP_RANK", env.get("PET_NODE_RANK", "0"))),
            "time": time.time(),
        }
        sys.stderr.write(info["headline"] + "\n" + text)
        sys.stderr.flush()
        data = {
            "message": {
                "message": info["headline"],
                "extraInfo": {
                    "py_callstack": info["headline"] + "\n" + text,
                    "timestamp": str(int(info["time"])),
                },
            },
            "kale_ext": info,
        }
        path = env.get("TORCHELASTIC_ERROR_FILE")
        try:
            if path:
                with open(path + ".tmp", "w") as f:
                    json.dump(data, f)
                os.replace(path + ".tmp", path)
            if os.path.isfile("/dev/termination-log") and not os.path.getsize(
                "/dev/termination-log"
            ):
                with open("/dev/termination-log", "w") as f:
                    f.write(json.dumps({"kale_ext": info})[:4096])
        except OSError:
            pass

    previous = sys.excepthook

    def hook(etype, value, tb):
        try:
            found = [f for e in chain(value) for f in ours(e.__traceback__)]
            here = [c for _, c in ours(tb) if c] or [c for _, c in found if c]
            if not here:
                return previous(etype, value, tb)
            text = render(etype, value, tb, {f for f, _ in found})
            record(here[-1], describe(etype, value), text)
        except Exception:
            return previous(etype, value, tb)

    def on_exit(stop):  # sys.exit(3): no traceback, but a cell and a line all the same
        try:
            here = [c for _, c in ours(stop.__traceback__) if c]
            if here and stop.code not in (None, 0):
                record(here[-1], f"SystemExit: {stop.code}", "")
        except Exception:
            pass

    sys.excepthook = hook

    # torchrun --tee: stdout and stderr are two files, tailed apart; one file keeps the order
    if "TORCHELASTIC_RUN_ID" in os.environ:
        import stat

        try:
            out, err = os.fstat(1), os.fstat(2)
            if (
                stat.S_ISREG(out.st_mode)
                and stat.S_ISREG(err.st_mode)
                and (out.st_dev, out.st_ino) != (err.st_dev, err.st_ino)
            ):
                sys.stdout.flush()
                sys.stderr.flush()
                os.dup2(1, 2)
                # by whole lines (torchrun tails the file: a line written in pieces, as an
                # unbuffered print(a, b) does, would be cut by its prefix)
                sys.stdout.reconfigure(write_through=False, line_buffering=True)
        except (OSError, ValueError):
            pass
    return on_exit
