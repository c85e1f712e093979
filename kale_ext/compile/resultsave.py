"""Rank 0's return value, saved with the job's outputs by every compiled module.

The module's launcher passes what the job's function returned to :func:`_kale_ext_keep`, whose
source codegen copies verbatim (the training image needs no kale_ext). On rank 0 only it writes,
into ``KALE_EXT_OUTPUT_DIR/.kale-ext/``:

- ``value.json`` for plain data: dicts with string keys, lists, strings, numbers, booleans and
  None (what JSON keeps exactly; a tuple is not one, it would come back a list). A NumPy scalar
  (``np.int64``, ``np.float32``, ``np.bool_``: what ``(pred == y).sum()`` gives) is plain data
  too, saved as the Python value its ``.item()`` gives; a NumPy array is not (``.tolist()`` it);
- else ``value.pt`` by ``torch.save`` for tensors and dicts, lists and tuples of them (a model's
  ``state_dict()``), when the job loaded torch: the kinds ``torch.load(weights_only=True)``
  accepts, and the file is checked by loading it so. Reading it back never unpickles arbitrary
  objects (plain pickle would run any code the file names; JSON and weights-only loading
  cannot), which is why other objects are refused rather than pickled;
- ``info.json`` last: ``{"saved", "format", "size", "reason", "type"}``.

A function that returns nothing (None) writes nothing: the outputs stay the job's own files.

A value that cannot be saved (another type; larger than the job's bound, default
:data:`MAX_BYTES`, which the environment variable ``KALE_EXT_RESULT_MAX_BYTES`` sets: ``--env
KALE_EXT_RESULT_MAX_BYTES=BYTES``, at most :data:`CEILING`; a full disk) is refused with a line
in the log and ``saved: false`` with the reason in ``info.json``: the job itself still succeeds
(its outputs and logs are what it made; failing it for its return value would throw them
away). Files are written under a temporary name, then renamed: a reader never sees half a
value. The function of a notebook whose job is one function (an `entrypoint` cell, a Kubeflow
SDK notebook) may return; tagged cells cannot (`return` outside a function).
"""

from __future__ import annotations

#: In KALE_EXT_OUTPUT_DIR: where the value and its info go (a name no job's file needs).
FOLDER = ".kale-ext"
VALUE_JSON, VALUE_TORCH, INFO = "value.json", "value.pt", "info.json"
#: The largest value saved by default, in bytes; the job's environment variable MAX_BYTES_ENV
#: sets another, up to CEILING (build_job_spec refuses other values, naming the variable).
MAX_BYTES = 100 * 2**20
MAX_BYTES_ENV = "KALE_EXT_RESULT_MAX_BYTES"
CEILING = 2**34  # 16 GiB: a value this large belongs in a file the job writes


def check_bound(text: str) -> str | None:
    """Why ``text`` cannot be the bound of MAX_BYTES_ENV (None: it can)."""
    if not text.isdigit() or len(text) > 12 or int(text) > CEILING:
        return f"must be a whole number of bytes from 0 to {CEILING}, not {text[:40]!r}"
    return None


def _kale_ext_keep(value, folder, default_limit, limit_env):  # kale_ext: rank 0's return value
    import json
    import os
    import sys

    if value is None or os.environ.get("RANK", "0") != "0":
        return  # nothing returned (nothing written: the outputs stay the job's own), another rank
    if not os.environ.get("KALE_EXT_OUTPUT_DIR"):
        return  # the module run by hand
    where = os.path.join(os.environ["KALE_EXT_OUTPUT_DIR"], folder)
    try:
        limit = int(os.environ.get(limit_env) or default_limit)
    except ValueError:
        limit = default_limit
    kind = type(value).__name__

    class TooLarge(Exception):
        pass

    class Capped:  # a file that refuses to grow past the limit (nothing large is held)
        def __init__(self, f):
            self.f, self.size = f, 0

        def write(self, data):
            data = data.encode("utf-8") if isinstance(data, str) else data
            self.size += len(data)
            if self.size > limit:
                raise TooLarge
            return self.f.write(data)

        def flush(self):
            self.f.flush()

    def number(v):  # a NumPy scalar (np.int64, np.float32, np.bool_): the Python value it holds
        if type(v).__module__ == "numpy" and getattr(v, "ndim", None) == 0:
            held = v.item()
            if isinstance(held, (bool, int, float, str)):
                return held
        raise TypeError(f"{type(v).__name__} is not plain data")

    def plain(v, depth=0):
        if v is None or isinstance(v, (bool, int, float, str)):
            return True
        try:
            number(v)
            return True
        except TypeError:
            pass
        if depth > 200:
            return False
        if type(v) is list:
            return all(plain(x, depth + 1) for x in v)
        if type(v) is dict:
            return all(type(k) is str and plain(x, depth + 1) for k, x in v.items())
        return False

    def weights(v, torch, storages, depth=0):  # what torch.load(weights_only=True) accepts
        if isinstance(v, torch.Tensor):
            if type(v) not in (torch.Tensor, torch.nn.Parameter):
                return f"a tensor subclass ({type(v).__module__}.{type(v).__name__})"
            storage = v.untyped_storage()
            storages[storage.data_ptr(), v.device.type] = storage.nbytes()
            return None
        if v is None or isinstance(v, (bool, int, float, complex, str, bytes)):
            return None
        if isinstance(v, (torch.Size, torch.dtype, torch.device)):
            return None
        if depth > 200:
            return "nested more than 200 levels deep"
        if type(v) in (list, tuple, set):
            items = v
        elif isinstance(v, dict) and type(v).__module__ in ("builtins", "collections"):
            items = [*v.keys(), *v.values()]
        else:
            return f"a {type(v).__module__}.{type(v).__name__}"
        for x in items:
            why = weights(x, torch, storages, depth + 1)
            if why:
                return why
        return None

    def write(name, dump):
        tmp = os.path.join(where, f".{name}.tmp")
        capped = Capped(None)
        try:
            with open(tmp, "wb") as f:
                capped.f = f
                dump(capped)
            os.replace(tmp, os.path.join(where, name))
            return capped.size
        except BaseException:
            if os.path.exists(tmp):
                os.remove(tmp)
            if capped.size > limit:  # torch.save wraps the writer's error in its own
                raise TooLarge from None
            raise

    def dump_json(f):  # in pieces of 64 KiB: a large value is never one string
        pieces, held = [], 0
        for piece in json.JSONEncoder(allow_nan=True, default=number).iterencode(value):
            pieces.append(piece)
            held += len(piece)
            if held >= 65536:
                f.write("".join(pieces))
                pieces, held = [], 0
        f.write("".join(pieces))

    def size_text(n):
        return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n} bytes"

    saved, fmt, size, reason = False, None, 0, None
    try:
        os.makedirs(where, exist_ok=True)
        for old in ("value.json", "value.pt"):
            if os.path.exists(os.path.join(where, old)):
                os.remove(os.path.join(where, old))
        if plain(value):
            size = write("value.json", dump_json)
            fmt, saved = "json", True
        elif "torch" not in sys.modules:
            reason = (
                f"{kind} is not plain data (dicts with string keys, lists, strings, numbers, "
                "booleans, None), and the job did not load torch to save it as tensors"
            )
        else:
            torch = sys.modules["torch"]
            storages = {}
            why = weights(value, torch, storages)
            held = sum(storages.values())
            if why:
                what = kind if why == f"a {type(value).__module__}.{kind}" else f"{kind} of {why}"
                reason = (
                    f"{what} cannot be saved safely: return plain data or "
                    "tensors (dicts, lists, tuples of them: a model's state_dict()), and write "
                    "other objects to KALE_EXT_OUTPUT_DIR yourself"
                )
            elif held > limit:
                reason = (
                    f"its tensors hold {size_text(held)}, more than the {size_text(limit)} a "
                    "result may take (a slice saves its whole tensor: .clone() it; or raise "
                    f"the bound: --env {limit_env}=BYTES)"
                )
            else:
                size = write("value.pt", lambda f: torch.save(value, f))
                path = os.path.join(where, "value.pt")
                try:  # through a Python file: some mounts are seen by Python's open() alone
                    with open(path, "rb") as f:
                        torch.load(f, weights_only=True, map_location="cpu")
                except Exception as e:
                    os.remove(path)
                    reason = f"torch cannot load it back safely (weights_only): {e}"
                    size = 0
                else:
                    fmt, saved = "torch", True
        if reason and ("numpy.ndarray" in reason or kind == "ndarray"):
            reason += " (a NumPy array: return a.tolist(), or torch.from_numpy(a))"
    except TooLarge:
        reason = (
            f"{kind} larger than the {size_text(limit)} a result may take: write it to "
            f"KALE_EXT_OUTPUT_DIR yourself, or raise the bound: --env {limit_env}=BYTES"
        )
        size = 0
    except Exception as e:
        reason = f"it could not be saved: {type(e).__name__}: {e}"
        size = 0
    info = {"saved": saved, "format": fmt, "size": size, "reason": reason, "type": kind}
    try:
        os.makedirs(where, exist_ok=True)
        tmp = os.path.join(where, ".info.json.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(info, f)
        os.replace(tmp, os.path.join(where, "info.json"))
    except Exception as e:
        reason = reason or f"its record could not be written: {type(e).__name__}: {e}"
        saved = False
    if saved:
        said = f"is saved: {fmt}, {size_text(size)}"
        print(f"kale_ext: the job's return value ({kind}) {said}", flush=True)
    else:
        print(f"kale_ext: the job's return value is not saved: {reason}", flush=True)
