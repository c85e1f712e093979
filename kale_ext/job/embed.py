"""How much of a notebook a TrainJob may carry in its command (trainjob.training_command): the
notebook's own code is counted, not what kale_ext adds to it (the map from the module's lines to
cells grows with the cells, the error hook, the result saver). Checked by the Kubernetes
backend before anything is created; a local run embeds nothing and has no such bound."""

from __future__ import annotations

from ..errors import ConfigError
from .spec import JobSpec
from .trainjob import payload

#: The notebook's own code a TrainJob may carry, compressed (its cells as compiled).
MAX_EMBEDDED_CODE = 512 * 1024
#: The whole command a TrainJob may carry (the notebook's code with what kale_ext adds), well
#: under etcd's 1.5 MiB for the whole object and a container's 2 MiB for its command line and
#: environment.
MAX_EMBEDDED_COMMAND = 1024 * 1024


def own_code(spec: JobSpec) -> str:
    """The module's lines that came from the notebook's cells (its source map's)."""
    lines = spec.job.source.split("\n")
    return "\n".join(
        "\n".join(lines[s["first_line"] - 1 : s["first_line"] - 1 + s["lines"]])
        for s in spec.job.source_map
    )


def _kib(size: int) -> str:
    return f"{size / 1024:.0f} KiB"


def check_embeddable(spec: JobSpec, command: list[str]) -> None:
    """Refuse a job whose TrainJob cannot carry its code: the notebook's own code, compressed,
    over MAX_EMBEDDED_CODE, or the whole command over MAX_EMBEDDED_COMMAND (then saying how
    much of it is kale_ext's, for how many cells). A ConfigError on ``source``."""
    code = len(payload(own_code(spec)))
    if code > MAX_EMBEDDED_CODE:
        raise ConfigError(
            "source",
            f"the notebook's code is too large to embed in a TrainJob ({_kib(code)} compressed; "
            f"the limit is {_kib(MAX_EMBEDDED_CODE)}): move data out of the notebook's code, "
            "or run it locally",
        )
    whole = sum(len(a) for a in command)
    if whole > MAX_EMBEDDED_COMMAND:
        raise ConfigError(
            "source",
            f"the job's command is too large to embed in a TrainJob ({_kib(whole)}, of which "
            f"{_kib(whole - code)} is kale_ext's own for {len(spec.job.source_map)} cells; the "
            f"limit is {_kib(MAX_EMBEDDED_COMMAND)}): merge cells, or run it locally",
        )
