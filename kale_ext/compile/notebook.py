"""Read a notebook: its cells, their tags (the tag grammar, kept as data) and its metadata.

Reading never modifies the file. Anything malformed raises :class:`NotebookError` with a message
that names the file and, where it can, the cell.
"""

from __future__ import annotations

import enum
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import Diagnostic, NotebookError


class Role(enum.Enum):
    """What a code cell contributes to the compiled job."""

    IMPORTS = "imports"
    FUNCTIONS = "functions"
    PARAMETERS = "parameters"
    TRAINING = "training"
    SKIP = "skip"
    DISTRIBUTED = "distributed"
    ENTRYPOINT = "entrypoint"


@dataclass(frozen=True)
class TagRule:
    """One row of the tag grammar: a pattern and what a matching tag means."""

    pattern: str
    role: Role | None = None  # the role the tag gives its cell
    setting: str | None = None  # the job setting it maps to (limits, annotations, labels, image)
    note: str | None = None  # why the tag has no effect (reported as a warning)
    help: str = ""

    @property
    def regex(self) -> re.Pattern:
        return _compiled(self.pattern)


_REGEX_CACHE: dict[str, re.Pattern] = {}


def _compiled(pattern: str) -> re.Pattern:
    if pattern not in _REGEX_CACHE:
        _REGEX_CACHE[pattern] = re.compile(pattern + r"\Z")
    return _REGEX_CACHE[pattern]


_STEP = r"[_a-z][_a-z0-9]*"

#: The tag grammar. Kale's tags are either mapped or explained, never silently dropped.
TAGS: tuple[TagRule, ...] = (
    TagRule("imports", Role.IMPORTS, help="import statements, placed first in the function"),
    TagRule("functions", Role.FUNCTIONS, help="helper functions, classes and constants"),
    TagRule("parameters", Role.PARAMETERS, help="literal assignments that become parameters"),
    TagRule("pipeline-parameters", Role.PARAMETERS, help="Kale's name for parameters"),
    TagRule("training", Role.TRAINING, help="training code (untagged code cells are too)"),
    TagRule("skip", Role.SKIP, help="left out of the job"),
    TagRule("distributed", Role.DISTRIBUTED, help="the cell that defines the DistributedConfig"),
    TagRule(
        "entrypoint", Role.ENTRYPOINT, help="the function that is the job (Kubeflow SDK style)"
    ),
    TagRule(f"step:{_STEP}", Role.TRAINING, help="Kale step: part of the training body"),
    TagRule(f"block:{_STEP}", Role.TRAINING, help="Kale 0.x step: part of the training body"),
    TagRule("pipeline-metrics", Role.TRAINING, help="Kale metrics cell: runs in the body"),
    TagRule(
        f"prev:{_STEP}",
        note="cells run in notebook order, so Kale's `prev:` dependency is not needed",
    ),
    TagRule(r"limit:(?P<key>[^:\s]+):(?P<value>[^:\s]+)", setting="limits"),
    TagRule(r"annotation:(?P<key>[^:\s]+):(?P<value>.*)", setting="annotations"),
    TagRule(r"label:(?P<key>[^:\s]+):(?P<value>.*)", setting="labels"),
    TagRule(r"image:(?P<value>\S+)", setting="image"),
    TagRule(
        r"secret:.*",
        note="Kale secrets are not mounted; use DistributedConfig env with a secretKeyRef",
    ),
    TagRule(r"cache:(enabled|disabled)", note="Kale step caching does not apply to a training job"),
    TagRule(r"report:(enabled|disabled)", note="Kale HTML reports are not produced"),
    TagRule(r"notebook:.*", note="Kale sub-pipelines are not supported; the cell is left out"),
)

#: Tags that give a cell its role, for the cell tag editor.
ROLE_TAGS = tuple(r.pattern for r in TAGS if r.role is not None and ":" not in r.pattern)


def match_tag(tag: str) -> tuple[TagRule, re.Match] | None:
    """The grammar row a tag matches, with the match, or None for an unknown tag."""
    for rule in TAGS:
        m = rule.regex.match(tag)
        if m:
            return rule, m
    return None


@dataclass(frozen=True)
class Cell:
    index: int  # 0-based position among all cells of the notebook
    cell_type: str
    source: str
    tags: tuple[str, ...] = ()
    id: str | None = None


@dataclass
class Notebook:
    cells: list[Cell]
    name: str  # the file name, e.g. "digits.ipynb" (never a machine path)
    metadata: dict = field(default_factory=dict)
    sha256: str = ""

    @property
    def stem(self) -> str:
        return self.name[: -len(".ipynb")] if self.name.endswith(".ipynb") else self.name


@dataclass(frozen=True)
class CellPlan:
    """The result of reading a cell's tags: its role, job settings and what to warn about."""

    role: Role | None  # None: not a code cell, or empty
    settings: dict
    diagnostics: list[Diagnostic]


def plan_cell(cell: Cell) -> CellPlan:
    """Apply the tag grammar to one cell."""
    if not cell.tags:  # most cells: training code, or nothing
        code = cell.cell_type == "code" and cell.source and not cell.source.isspace()
        return CellPlan(Role.TRAINING if code else None, {}, [])
    diags: list[Diagnostic] = []
    roles: dict[Role, str] = {}
    settings: dict = {}

    def warn(msg: str, code: str) -> None:
        diags.append(Diagnostic("warning", msg, cell.index, cell.id, None, code))

    for tag in cell.tags:
        found = match_tag(tag)
        if found is None:
            warn(f"unknown tag `{tag}` is ignored", "unknown-tag")
            continue
        rule, m = found
        if rule.role is not None:
            roles.setdefault(rule.role, tag)
        if rule.note:
            warn(f"tag `{tag}`: {rule.note}", "tag-ignored")
        if rule.setting == "image":
            settings["image"] = m["value"]
        elif rule.setting:
            settings.setdefault(rule.setting, {})[m["key"]] = m["value"]

    if cell.cell_type != "code" or not cell.source.strip():
        return CellPlan(None, settings, diags)
    if len(roles) > 1:
        names = ", ".join(f"`{t}`" for t in roles.values())
        diags.append(
            Diagnostic(
                "error",
                f"tags {names} conflict: a cell has one role",
                cell.index,
                cell.id,
                None,
                "conflicting-tags",
            )
        )
        return CellPlan(None, settings, diags)
    if any(t.startswith("notebook:") for t in cell.tags):
        return CellPlan(Role.SKIP, settings, diags)
    role = next(iter(roles), Role.TRAINING)
    return CellPlan(role, settings, diags)


# ---------------------------------------------------------------------------------------------
# Reading


def _text(value, where: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "".join(value)
    raise NotebookError(f"{where}: `source` must be a string or a list of strings")


def _cells_v4(nb: dict, name: str) -> list[Cell]:
    cells = nb.get("cells")
    if not isinstance(cells, list):
        raise NotebookError(f"{name}: the notebook has no `cells` list")
    out = []
    for i, raw in enumerate(cells):
        if not isinstance(raw, dict):
            raise NotebookError(f"{name}, cell {i + 1}: a cell must be a JSON object")
        cell_type = raw.get("cell_type")
        if cell_type not in ("code", "markdown", "raw"):
            raise NotebookError(f"{name}, cell {i + 1}: unknown cell_type {cell_type!r}")
        meta = raw.get("metadata", _NO_METADATA)
        if not isinstance(meta, dict):
            raise NotebookError(f"{name}, cell {i + 1}: `metadata` must be an object")
        tags = meta.get("tags", _NO_TAGS)
        if not isinstance(tags, list) or tags and not all(isinstance(t, str) for t in tags):
            raise NotebookError(f"{name}, cell {i + 1}: `metadata.tags` must be a list of strings")
        tags = tuple(t.strip() for t in tags if t.strip()) if tags else ()
        source = raw.get("source", "")
        cell_id = raw.get("id")
        out.append(
            Cell(
                i,
                cell_type,
                source if type(source) is str else _text(source, f"{name}, cell {i + 1}"),
                tags,
                cell_id if isinstance(cell_id, str) else None,
            )
        )
    return out


_NO_METADATA: dict = {}  # defaults, read only
_NO_TAGS: list = []


#: A JSON escape of a UTF-16 surrogate (a lone one is not text; a pair is one character).
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")


def _check_text(nb: dict, name: str) -> None:
    """Every string in ``nb`` is text (no lone surrogate); NotebookError names the cell."""
    cells = nb.get("cells") if isinstance(nb.get("cells"), list) else []
    for i, cell in enumerate(cells):
        try:
            json.dumps(cell, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise NotebookError(f"{name}: cell {i} holds a lone surrogate (\\ud800-\\udfff "
                                "without its pair): it is not text") from None  # fmt: skip
    try:
        json.dumps(nb, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise NotebookError(f"{name}: its metadata holds a lone surrogate (\\ud800-\\udfff "
                            "without its pair): it is not text") from None  # fmt: skip


def parse_notebook(data: bytes | str | dict, name: str = "notebook.ipynb") -> Notebook:
    """Parse notebook content (bytes, text or an already-decoded JSON object)."""
    if isinstance(data, dict):
        try:
            raw = json.dumps(data, sort_keys=True, check_circular=False).encode()
        except RecursionError:
            raise NotebookError(
                f"{name} is not a notebook: its JSON is nested too deeply"
            ) from None
        nb = data
    else:
        raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise NotebookError(
                f"{name} is not a notebook: it is not UTF-8 text (byte {e.start})"
            ) from None
        try:
            nb = json.loads(text)
        except json.JSONDecodeError as e:
            raise NotebookError(
                f"{name} is not valid notebook JSON (line {e.lineno}, column {e.colno}): {e.msg}"
            ) from None
        except RecursionError:
            raise NotebookError(
                f"{name} is not a notebook: its JSON is nested too deeply"
            ) from None
    if not isinstance(nb, dict):
        raise NotebookError(f"{name} is not a notebook: the JSON is not an object")
    if _SURROGATE.search(raw):  # an escaped surrogate: text only when it is one of a pair
        _check_text(nb, name)
    major = nb.get("nbformat")
    if major == 4:
        pass
    elif major == 3:
        nb = _upgrade_v3(nb, name)
    elif major is None:
        raise NotebookError(f"{name} is not a notebook: it has no `nbformat` version")
    else:
        raise NotebookError(
            f"{name}: nbformat version {major!r} is not supported (kale_ext reads version 4 "
            "and converts version 3)"
        )
    metadata = nb.get("metadata", {})
    if not isinstance(metadata, dict):
        raise NotebookError(f"{name}: notebook `metadata` must be an object")
    language = (metadata.get("kernelspec") or {}).get("language") or (
        metadata.get("language_info") or {}
    ).get("name")
    if isinstance(language, str) and language.lower() not in ("python", "python3", ""):
        raise NotebookError(
            f"{name}: kale_ext compiles Python notebooks; this one's kernel language is {language}"
        )
    return Notebook(
        cells=_cells_v4(nb, name),
        name=name,
        metadata=metadata,
        sha256=hashlib.sha256(raw).hexdigest(),
    )


def _upgrade_v3(nb: dict, name: str) -> dict:
    import nbformat

    try:
        return dict(nbformat.convert(nbformat.from_dict(nb), 4))
    except Exception as e:  # nbformat raises many kinds for a broken v3 file
        raise NotebookError(f"{name}: cannot convert this nbformat 3 notebook: {e}") from None


def read_notebook(path: str | os.PathLike) -> Notebook:
    """Read a notebook file. Only its base name is kept, never the machine path."""
    from ..errors import UnsafeFile
    from ..files import MAX_NOTEBOOK_BYTES, read_bytes

    p = Path(path)
    try:
        data = read_bytes(p, MAX_NOTEBOOK_BYTES)
    except UnsafeFile as e:
        raise NotebookError(f"cannot read notebook {e}") from None
    except FileNotFoundError:
        raise NotebookError(f"notebook not found: {path}") from None
    except IsADirectoryError:
        raise NotebookError(f"{path} is a directory, not a notebook") from None
    except OSError as e:
        raise NotebookError(f"cannot read {path}: {e.strerror}") from None
    return parse_notebook(data, p.name)


def source_lines(source: str) -> list[str]:
    """The lines of Python source as Python's tokenizer sees them: split at \\n, \\r\\n and \\r
    only (str.splitlines also splits at U+2028, form feeds and other characters a string
    literal may hold, cutting the literal in two)."""
    lines = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines
