"""One exception family for everything kale_ext reports to a user.

Every error carries a message that says what is wrong and where (cell and line, field name,
server reason); the CLI, the REST API and the panel show that message, never a traceback.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Diagnostic:
    """A compile error or warning, located in the notebook where possible.

    ``cell`` is the 0-based index into the notebook's cells (markdown cells count);
    messages show it 1-based ("cell 7"), as a person counts cells from the top.
    """

    severity: str  # "error" | "warning"
    message: str
    cell: int | None = None
    cell_id: str | None = None
    line: int | None = None
    code: str = ""

    @property
    def where(self) -> str:
        if self.cell is None:
            return "notebook"
        place = f"cell {self.cell + 1}"
        return f"{place}, line {self.line}" if self.line else place

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"

    def to_dict(self) -> dict:
        return asdict(self)


class KaleExtError(Exception):
    """Base class: an error whose message is meant for the user as it is."""

    def to_dict(self) -> dict:
        return {"error": type(self).__name__, "message": str(self)}

    def __reduce__(self):
        """Pickled as its message and attributes, not its constructor's arguments: compile
        processes send these back to the server (an error that fails to unpickle kills them)."""
        return (_restore, (type(self), self.args, self.__dict__))


def _restore(cls: type, args: tuple, state: dict) -> KaleExtError:
    error = cls.__new__(cls)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error


class NotebookError(KaleExtError):
    """The notebook file cannot be read (missing, not JSON, unsupported format)."""


class CompileError(KaleExtError):
    """The notebook cannot be compiled; ``diagnostics`` lists every error (and warning)."""

    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = diagnostics
        errors = [d for d in diagnostics if d.severity == "error"]
        super().__init__("\n".join(str(d) for d in errors))

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    def to_dict(self) -> dict:
        return {**super().to_dict(), "diagnostics": [d.to_dict() for d in self.diagnostics]}


class ConfigError(KaleExtError):
    """A configuration value is invalid; ``field`` names it (e.g. ``limits.cpu``)."""

    def __init__(self, field: str, message: str):
        self.field, self.message = field, message
        super().__init__(f"{field}: {message}")

    def to_dict(self) -> dict:
        return {**super().to_dict(), "field": self.field}


class BackendError(KaleExtError):
    """A backend failure with the server's status and reason (HTTP-like status codes)."""

    def __init__(self, message: str, status: int = 500, reason: str = ""):
        self.status = status
        self.reason = reason
        super().__init__(message)

    def to_dict(self) -> dict:
        return {**super().to_dict(), "status": self.status, "reason": self.reason}


class NotFound(BackendError):
    def __init__(self, message: str):
        super().__init__(message, 404, "NotFound")


class LogsGone(BackendError):
    """The job exists, and its logs went with its pods (nothing of them was kept)."""

    def __init__(self, message: str):
        super().__init__(message, 410, "Gone")


class JobFailed(KaleExtError):
    """A job whose result was asked for failed: the message is the failure's headline (who
    failed, where in the notebook, how), as the CLI shows it; ``failure`` is the whole of it."""

    def __init__(self, message: str, failure=None):
        self.failure = failure
        super().__init__(message)


class NoResult(KaleExtError):
    """A job ended without a value to give back: it returned nothing, its value could not be
    saved, or it cannot be read from here. The message says which, and why."""


class UnsafeFile(KaleExtError, OSError):
    """A file the user controls that kale_ext will not read: not a regular file (a FIFO, a
    device), a link that leads out of where it must stay, larger than its bound, or JSON nested
    deeper than its bound. Also an OSError, so a caller that skips an unreadable file skips it;
    ``status`` is what the REST API answers (400, or 413 for a file too large)."""

    def __init__(self, path, why: str, status: int = 400):
        OSError.__init__(self, 22, why, str(path))
        self.path, self.why, self.status = str(path), why, status

    def __str__(self) -> str:
        return f"{self.path}: {self.why}"

    def to_dict(self) -> dict:
        return {**super().to_dict(), "status": self.status}


class StorageError(BackendError):
    """A folder that cannot take what kale_ext writes: full (507) or read-only (507); the
    message names the folder."""
