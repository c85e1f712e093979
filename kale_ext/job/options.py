"""The one table of submit-time job options.

Each row is an option: its name (the JobOptions field and the REST key), its kind, its help, its
command-line flag and its bounds. From this table come :class:`JobOptions`, the CLI's and the
magics' flags (option_flags.py), the REST API's JSON schema
(:func:`json_schema`, published in the OpenAPI document) and the checks of each value
(:func:`check`). To add an option, add a row here (and use it in spec.build_job_spec).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

from ..checkpoint import KEEP, MAX_KEEP
from ..errors import ConfigError
from ..lineage import MAX_STEP
from .k8s_values import PATTERNS, quantity
from .limits_held import WHERE, site_maximum

MAX_NODES = 1_000
MAX_PROCS_PER_NODE = 256
MAX_GPUS = 64
MAX_TRAIN_CALLS = 100
#: The most times a job is started again after a node fails (locally by its supervisor, on a
#: cluster by its JobSet's failure policy).
MAX_RESTARTS = 20
TI = 2**40
#: The largest quantities a job may ask for (cores; bytes): far above any node, far below what
#: overflows a scheduler's arithmetic.
MAX_CPU = 4_096
MAX_MEMORY = 64 * TI
MAX_WORKSPACE = 2**30


@dataclass(frozen=True)
class Option:
    """One job option. ``kind``: count, text, uri, quantity, gpu, texts (a list), requirements
    (a list of packages), pairs (NAME=VALUE on the command line, an object in JSON), params (the
    same, typed later by the notebook's parameters), config (a DistributedConfig), switch (true
    or false; on the command line a flag without a value), onoff (true or false; on the command
    line ``--flag`` and ``--no-flag``: unset, the backend chooses)."""

    name: str
    kind: str
    help: str
    flag: str | None = None  # on the command line; None: not a flag (REST and the panel only)
    metavar: str | None = None
    minimum: int | None = None
    maximum: int | None = None  # a count's or quantity's largest value, a text's or list's length
    above: int | None = None  # a quantity's value must be more than this (no CPU is no job)
    pattern: str | None = None  # a text's regular expression (full match)
    example: str | None = None

    @property
    def dest(self) -> str:
        return self.name


_URL = r"^https?://\S+$"
_URI = r"^(hf|s3|cache)://\S+$"
_QUEUE = PATTERNS["dns_label"]["pattern"]  # a LocalQueue's name, and the label value it becomes
_JOB_NAME = PATTERNS["job_name"]["pattern"]  # a lineage or parent names a job
_PATTERN_WORDS = {_URL: "an http(s) URL", _URI: "a URI such as hf://… or s3://…",  # in words
                  _QUEUE: "a Kueue LocalQueue name (a-z, 0-9 and '-', at most 63)",
                  _JOB_NAME: "a job name"}  # fmt: skip

OPTIONS: tuple[Option, ...] = (
    Option("name", "text", "job name (default: from the notebook, with a random suffix)",
           "--name", maximum=63),
    Option("runtime", "text", "training runtime (default: see `kale-ext defaults`)", "--runtime",
           maximum=253),
    Option("nodes", "count", "number of nodes", "--nodes", minimum=1, maximum=MAX_NODES),
    Option("train_call", "count", "which train() call of a Kubeflow SDK notebook is the job, "
           "when it has several (1 = the first; default: the last)", "--train-call",
           minimum=1, maximum=MAX_TRAIN_CALLS),
    Option("procs_per_node", "count", "processes per node (default: the runtime's choice: the "
           "GPUs, else the CPUs per node, else 1)",
           "--procs-per-node", minimum=1, maximum=MAX_PROCS_PER_NODE),
    Option("max_restarts", "count", "start the whole job again, up to this many times, when a "
           "node fails (default 0; the function resumes from checkpoint.latest())",
           "--max-restarts", "N", minimum=0, maximum=MAX_RESTARTS),
    Option("gpu", "gpu", "GPUs per node: a count, or a MIG profile such as mig-1g.5gb", "--gpu",
           minimum=0, maximum=MAX_GPUS),
    Option("cpu", "quantity", "CPU per node (requests and limits), e.g. 4 or 500m", "--cpu",
           maximum=MAX_CPU, above=0, example="4"),
    Option("memory", "quantity", "memory per node (requests and limits), e.g. 16Gi", "--memory",
           maximum=MAX_MEMORY, above=0, example="16Gi"),
    Option("image", "text", "container image for the training nodes", "--image", maximum=512),
    Option("parameters", "params",
           "override a parameter, typed as in the parameters cell (repeatable)", "--param",
           "NAME=VALUE", maximum=200),
    Option("packages", "requirements",
           "a package to install in the job, overriding the detected one of its name "
           "(repeatable)", "--package", "SPEC", maximum=200),
    Option("pin_packages", "onoff", "pin the notebook's packages without a version to the "
           "versions installed here (default: on for local runs, off on a cluster, where the "
           "image's own are used)", "--pin-packages"),
    Option("pip_index_urls", "texts", "a package index the nodes install from (repeatable)",
           "--pip-index-url", "URL", maximum=10, pattern=_URL),
    Option("env", "pairs", "an environment variable of every node (repeatable)", "--env",
           "NAME=VALUE", maximum=100),
    Option("config", "config", "a DistributedConfig laid over the notebook's"),
    Option("dataset_uri", "uri", "a dataset for the runtime's dataset initializer",
           "--dataset-uri", "URI", pattern=_URI),
    Option("model_uri", "uri", "a model for the runtime's model initializer", "--model-uri",
           "URI", pattern=_URI),
    Option("workspace", "text", "the folder the job gets as its working directory (default: "
           "the notebook's)", "--workspace", "DIR", maximum=4096),
    Option("no_workspace", "switch", "ship no files with the job (no workspace)",
           "--no-workspace"),
    Option("workspace_max_size", "quantity", "the most a workspace may hold (default 10Mi)",
           "--workspace-max-size", "SIZE", maximum=MAX_WORKSPACE, example="10Mi"),
    Option("outputs", "text", "on Kubernetes, the volume whose files outlive the job: "
           "pvc:NAME[:/mount] (locally: outputs/<job>/ beside the notebook)", "--outputs",
           "pvc:NAME", maximum=512),
    Option("checkpoints", "text", "where a lineage's checkpoints go: a folder locally, "
           "pvc:NAME[:/mount] on Kubernetes", "--checkpoints", "DIR|pvc:NAME", maximum=4096),
    Option("keep_checkpoints", "count", f"checkpoints a job keeps (default {KEEP})",
           "--keep-checkpoints", "N", minimum=1, maximum=MAX_KEEP),
    Option("volumes", "texts", "a volume for every node: pvc:NAME:/mount[:ro], secret:NAME:/mount, "
           "configmap:NAME:/mount or emptydir:/mount[:SIZE]; =LOCAL_DIR stands for it in local "
           "runs; a relative mount is inside the working directory (repeatable)", "--volume",
           "SPEC", maximum=32),
    Option("env_from_secrets", "texts", "every key of a Secret as an environment variable "
           "(repeatable)", "--env-from-secret", "NAME", maximum=16),
    Option("shm_size", "quantity", "a memory-backed /dev/shm of this size (at most the memory), "
           "e.g. 2Gi", "--shm-size", "SIZE", maximum=MAX_MEMORY, example="2Gi"),
    Option("service_account", "text", "the service account the nodes run as",
           "--service-account", "NAME", maximum=253),
    Option("image_pull_secrets", "texts", "a Secret to pull the image with (repeatable)",
           "--image-pull-secret", "NAME", maximum=16),
    Option("queue", "text", "on Kubernetes, the Kueue LocalQueue of the namespace the job waits "
           "in for quota (its kueue.x-k8s.io/queue-name label; `kale-ext queues` lists them)",
           "--queue", "NAME", maximum=63, pattern=_QUEUE),
    Option("lineage", "text", "whose checkpoints the job reads and writes (default: its own "
           "name; a resume sets its parent's: runs/resume.py)", maximum=63, pattern=_JOB_NAME),
    Option("parent", "text", "the job this one was resumed from", maximum=63, pattern=_JOB_NAME),
    Option("resume_step", "count", "the checkpoint step its parent last reported",
           minimum=0, maximum=MAX_STEP),
)  # fmt: skip

BY_NAME = {o.name: o for o in OPTIONS}


def _most(option: Option) -> tuple[int | None, str]:
    """An option's maximum, the site's where it set one (limits.py), with words saying so."""
    site = site_maximum(option.name) if BY_NAME.get(option.name) is option else None
    return (option.maximum, "") if site is None else (site, f" (the limit set in the {WHERE})")


class _Choices:
    """What JobOptions (made from OPTIONS below) can do."""

    @classmethod
    def from_dict(cls, data: Any, where: str = "options"):
        """From a JSON object, each value checked (ConfigError names `where.field`)."""
        if isinstance(data, cls):
            return data
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise ConfigError(where, f"must be an object, not {type(data).__name__}")
        unknown = sorted(set(data) - set(BY_NAME), key=str)
        if unknown:
            raise ConfigError(
                f"{where}.{unknown[0]}", f"unknown option (known: {', '.join(sorted(BY_NAME))})"
            )
        # a submit's own options are named as the flags and the panel name them: `nodes`
        named = (lambda k: k) if where == "options" else (lambda k: f"{where}.{k}")
        return cls(**{k: check(BY_NAME[k], v, named(k)) for k, v in data.items()})

    def chosen(self) -> dict:
        """The options chosen here (not None)."""
        values = ((f.name, getattr(self, f.name)) for f in dataclasses.fields(self))
        return {name: value for name, value in values if value is not None}

    def over(self, lower):
        """These options, falling back to ``lower`` where not chosen."""
        return dataclasses.replace(lower, **self.chosen())


#: Submit-time choices, a field per option. ``None``: not chosen here, take the next layer's.
JobOptions = dataclasses.make_dataclass(
    "JobOptions",
    [(o.name, Any, dataclasses.field(default=None)) for o in OPTIONS],
    bases=(_Choices,),
    namespace={"__module__": __name__},
)


# ----- checks ----------------------------------------------------------------------------------


def _count(option: Option, value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(where, f"must be a whole number, not {_short(value)}")
    if option.minimum is not None and value < option.minimum:
        raise ConfigError(where, f"must be at least {option.minimum}, got {value}")
    most, said = _most(option)
    if most is not None and value > most:
        raise ConfigError(where, f"must be at most {most}{said}, got {value}")
    return value


def _text(option: Option, value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(where, f"must be a non-empty string, not {_short(value)}")
    most, said = _most(option)
    if most is not None and len(value) > most:
        raise ConfigError(where, f"is {len(value)} characters; at most {most} allowed{said}")
    if option.pattern and not re.fullmatch(option.pattern, value):
        what = _PATTERN_WORDS[option.pattern]
        raise ConfigError(where, f"{_short(value)} is not {what}")
    return value


def _gpu(option: Option, value: Any, where: str) -> int | str:
    if isinstance(value, str) and value.lower().startswith("mig-"):
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(
            where, f"must be a GPU count or a MIG profile such as mig-1g.5gb, not {_short(value)}"
        )
    return _count(option, value, where)


def _texts(option: Option, value: Any, where: str) -> list[str]:
    if not isinstance(value, (list, tuple)):
        raise ConfigError(where, f"must be a list of strings, not {_short(value)}")
    most, said = _most(option)
    if most is not None and len(value) > most:
        raise ConfigError(where, f"has {len(value)} entries; at most {most} allowed{said}")
    return [_text(Option(option.name, "text", "", pattern=option.pattern), v, f"{where}[{i}]")
            for i, v in enumerate(value)]  # fmt: skip


def _requirements(option: Option, value: Any, where: str) -> list[str]:
    """Package requirements (`numpy>=2`, a URL): never pip options such as `-e /etc`."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    from .limits_held import URLS_TRAIT, package_urls_allowed

    items = _texts(option, value, where)
    seen: dict[str, int] = {}  # each package once: two entries would leave pip to pick one
    for i, item in enumerate(items):
        if item.lstrip().startswith("-"):
            raise ConfigError(f"{where}[{i}]", f"{item!r} is a pip option, not a package")
        if re.search(r"\s-", item):
            raise ConfigError(f"{where}[{i}]", f"{item!r} holds a pip option: one package each")
        if "://" in item or item.lstrip().lower().startswith("file:"):
            if not package_urls_allowed():
                raise ConfigError(f"{where}[{i}]", f"{item!r} is a URL: this server installs "
                                  "packages from its indexes only (KaleExtApp.allow_package_urls "
                                  f"lets URLs in; {URLS_TRAIT} in the {WHERE})")  # fmt: skip
            if any(c.isspace() for c in item.strip()) and " @ " not in item:
                raise ConfigError(f"{where}[{i}]", f"{item!r} is not one URL or NAME @ URL")
            if " @ " not in item:
                continue
        try:
            name = canonicalize_name(Requirement(item).name)
        except InvalidRequirement as e:
            first = str(e).splitlines()[0]
            raise ConfigError(
                f"{where}[{i}]", f"{item!r} is not a package requirement: {first}"
            ) from None
        if name in seen:
            raise ConfigError(
                f"{where}[{i}]", f"{item!r}: {name} is listed twice (also {where}[{seen[name]}])"
            )
        seen[name] = i
    return items


def _mapping(option: Option, value: Any, where: str) -> dict:
    if not isinstance(value, dict):
        raise ConfigError(where, f"must be an object of NAME: value, not {_short(value)}")
    most, said = _most(option)
    if most is not None and len(value) > most:
        raise ConfigError(where, f"has {len(value)} entries; at most {most} allowed{said}")
    if option.kind == "pairs":  # environment variables: what a process's environment can hold
        for name, item in value.items():
            if (
                not isinstance(name, str)
                or not name
                or "\x00" in name
                or "\n" in name
                or ("=" in name)
            ):
                raise ConfigError(where, f"{_short(name)} is not a variable name (no '=', "
                                  "newline or NUL)")  # fmt: skip
            if isinstance(item, bool) or not isinstance(item, (str, int, float)):
                raise ConfigError(f"{where}.{name}", f"must be a string, not {_short(item)}")
            if "\x00" in str(item):
                raise ConfigError(f"{where}.{name}", "holds a NUL byte, which no process's "
                                  "environment can carry")  # fmt: skip
    return dict(value)


def amount(value: int | float) -> str:
    """A bound as it is written: 64Ti, 1Gi, 4096."""
    for suffix, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20)):
        if value >= size and value % size == 0:
            return f"{int(value // size)}{suffix}"
    return f"{value:g}"


def _quantity(option: Option, value: Any, where: str) -> str:
    from .k8s_values import quantity_value

    text = quantity(value, where)
    most, said = _most(option)
    if most is not None and quantity_value(text) > most:
        raise ConfigError(where, f"must be at most {amount(most)}{said}, got {text}")
    if option.above is not None and quantity_value(text) <= option.above:
        raise ConfigError(where, f"must be more than {amount(option.above)}, got {text}")
    return text


def check(option: Option, value: Any, where: str | None = None) -> Any:
    """``value`` for ``option``, checked and normalised; None stays None (not chosen)."""
    where = where or option.name
    if value is None:
        return None
    kind = option.kind
    if kind == "count":
        return _count(option, value, where)
    if kind in ("text", "uri"):
        return _text(option, value, where)
    if kind == "quantity":
        return _quantity(option, value, where)
    if kind == "gpu":
        return _gpu(option, value, where)
    if kind in ("switch", "onoff"):
        if not isinstance(value, bool):
            raise ConfigError(where, f"must be true or false, not {_short(value)}")
        return value
    if kind == "texts":
        return _texts(option, value, where)
    if kind == "requirements":
        return _requirements(option, value, where)
    if kind in ("pairs", "params"):
        return _mapping(option, value, where)
    return value  # config: DistributedConfig.from_dict checks it where it is laid over


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# ----- the REST API ----------------------------------------------------------------------------


def _schema(option: Option) -> dict:
    bounds = {}
    most = _most(option)[0]  # the site's limit, where it set one
    if option.kind == "count":
        s: dict = {"type": "integer"}
        bounds = {"minimum": option.minimum, "maximum": most}
    elif option.kind in ("text", "uri"):
        s = {"type": "string", "minLength": 1}
        bounds = {"maxLength": most, "pattern": option.pattern}
    elif option.kind == "quantity":
        number: dict = {"type": "number", "minimum": option.above or 0, "maximum": most}
        if option.above is not None:  # more than it: OpenAPI 3.0's and JSON Schema's words
            number["not"] = {"enum": [option.above]}
        s = {"oneOf": [{"type": "string"}, {k: v for k, v in number.items() if v is not None}]}
    elif option.kind in ("switch", "onoff"):
        s = {"type": "boolean"}
    elif option.kind == "gpu":
        count = {"type": "integer", "minimum": option.minimum, "maximum": most}
        s = {"oneOf": [count, {"type": "string", "pattern": "^[Mm][Ii][Gg]-"}]}
    elif option.kind in ("texts", "requirements"):
        item = {"type": "string", "minLength": 1}
        if option.pattern:
            item["pattern"] = option.pattern
        s = {"type": "array", "items": item}
        bounds = {"maxItems": most}
    elif option.kind == "pairs":
        s = {"type": "object", "additionalProperties": {"type": "string"}}
        bounds = {"maxProperties": most}
    elif option.kind == "params":
        s = {"type": "object", "additionalProperties": True}
        bounds = {"maxProperties": most}
    else:
        s = {"$ref": "#/components/schemas/DistributedConfig"}
    s.update({k: v for k, v in bounds.items() if v is not None})
    if "$ref" not in s:
        s["description"] = option.help
    return s


def json_schema() -> dict:
    """The JSON schema of JobOptions, as the OpenAPI document publishes it."""
    return {
        "type": "object",
        "additionalProperties": False,
        "description": "submit-time choices; all optional (kale_ext/job/options.py)",
        "properties": {o.name: _schema(o) for o in OPTIONS},
    }
