"""The emulated cluster's volume mounts, for the Python processes of its pods.

A real kubelet mounts each volume at its ``mountPath`` in the container. Here a pod is a local
process, which cannot mount a folder at ``/var/run/...``; so its environment's
``EMULATED_MOUNTS`` ({mountPath: local folder}) and this module, first on ``PYTHONPATH``,
make Python's file functions (``open``, ``os.stat``, ``os.listdir``, ``os.scandir``,
``os.replace``, ...; and so ``pathlib``, ``shutil``, ``tarfile``) read and write the folder when
given a path under a mount (not C++ code's own file calls: ``torch.save(obj, path)`` fails there
where ``torch.save(obj, open(path, "wb"))`` works). Child Python processes (torchrun's workers) inherit it. Any other ``sitecustomize``
on the path still runs after it.
"""

import builtins
import importlib.machinery
import importlib.util
import io
import json
import os
import sys

_MOUNTS = sorted(
    json.loads(os.environ.get("EMULATED_MOUNTS") or "{}").items(), key=lambda m: -len(m[0])
)


def _local(path):
    """The local path for ``path`` when it lies under a mount; ``path`` itself otherwise."""
    try:
        text = os.fspath(path)
    except TypeError:
        return path  # a file descriptor
    binary = isinstance(text, bytes)
    name = os.fsdecode(text) if binary else text
    for mount, folder in _MOUNTS:
        base = mount.rstrip("/")
        if name == base or name.startswith(base + "/"):
            local = folder + name[len(base) :]
            return os.fsencode(local) if binary else local
    return path


def _mapped(function):
    def call(*args, **kwargs):
        if args:
            args = (_local(args[0]), *args[1:])
        elif "path" in kwargs:
            kwargs["path"] = _local(kwargs["path"])
        return function(*args, **kwargs)

    call.__name__ = call.__qualname__ = function.__name__
    call.__doc__ = function.__doc__
    return call


def _mapped_pair(function):
    """A function of two paths (rename, replace: a file written, then given its name)."""

    def call(src, dst, *args, **kwargs):
        return function(_local(src), _local(dst), *args, **kwargs)

    call.__name__ = call.__qualname__ = function.__name__
    call.__doc__ = function.__doc__
    return call


if _MOUNTS:
    builtins.open = io.open = _mapped(io.open)
    for _name in ("open", "stat", "lstat", "listdir", "scandir", "access", "chdir", "readlink",
                  "mkdir", "rmdir", "remove", "unlink", "chmod", "utime", "truncate"):  # fmt: skip
        setattr(os, _name, _mapped(getattr(os, _name)))
    for _name in ("rename", "replace"):
        setattr(os, _name, _mapped_pair(getattr(os, _name)))

_HERE = os.path.dirname(os.path.abspath(__file__))
_NEXT = importlib.machinery.PathFinder.find_spec(
    "sitecustomize", [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
)
if _NEXT is not None and _NEXT.loader is not None:
    _module = importlib.util.module_from_spec(_NEXT)
    _NEXT.loader.exec_module(_module)
