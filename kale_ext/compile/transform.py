"""Turn a cell's IPython source into plain Python, with IPython's own input transformer.

``%pip install`` / ``!pip install`` become packages; display-only magics disappear;
``%%time``, ``%%capture``, ``%time`` and ``%timeit`` keep their code; ``%%writefile`` and
``%env`` are translated faithfully. Any other magic or shell command is a compile error that
names the cell and line: never silently dropped, never broken code.
"""

from __future__ import annotations

import ast
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..errors import Diagnostic
from . import kept, linemagics
from .notebook import Cell, source_lines

# What IPython's transformer (IPython.core.inputtransformer2) could change, each a superset of
# what one of its transforms looks for, lines split where its str.splitlines splits them (\r,
# form feeds, U+2028 too): a first line (after blank ones) that is indented, which it dedents; a
# line that starts (after blanks) with an escape (% ! ? / , ;) or a prompt (>>>, ..., ...:, In [
# ), which it turns into a call or strips; a ? at a line's end (help); `=` then % or ! (a magic's
# or a command's value); a last line ended by a lone \r (IPython's added \n makes it \r\n, which
# can end a continued line). Cells with none of it are plain Python as they stand and skip the
# (slow) transformer; the others go through IPython, which does the real work. Each search
# starts at a given character (the regex engine skips to it), where one alternation of them all
# was tried at every position (3x slower).
# Blanks never reach past a line's end (`\s*` could: quadratic on a cell of empty lines).
_EOL = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_BLANK = f"[^\\S{_EOL}]"  # whitespace within a line
_INDENTED_FIRST_LINE = re.compile(f"(?:\\s*[{_EOL}])?[ \t]")  # matched at the start only
# Leading blank lines IPython drops, one ended where Python sees no line end (U+2028 and the
# like: `\u2028x = 1` is `x = 1` to IPython, a syntax error to Python). Matched at the start.
_ODD_BLANK_FIRST_LINES = re.compile(f"\\s*[{_EOL[1:]}]")
_ESCAPE_AT_LINE_START = re.compile(  # searched in "\n" + the cell
    f"[{_EOL}](?:\\.\\.\\.|{_BLANK}*(?:[%!?/,;]|>>>|\\.{{3,}}:|(?:\\[(?:nav|ins)\\] )?In \\[))"
)
_HELP_AT_LINE_END = re.compile(f"\\?(?:{_BLANK}|\\\\)*(?:[{_EOL}]|\\Z)")
_MAGIC_VALUE = re.compile(f"={_BLANK}*[%!]")  # `=` then a continued line: a line start
# A line of blanks only, which IPython 9.19 empties (its leading_indent is textwrap.dedent's):
# that changes the program only inside a string or a continued line.
_BLANKS_ONLY_LINE = re.compile(r"^[ \t]+$", re.M)


def needs_ipython(source: str) -> bool:
    """Whether IPython's transformer could change ``source`` (False: it is plain Python as it
    stands; IPython would only add a final newline and drop leading blank lines)."""
    return bool(
        source.endswith("\r")
        or _INDENTED_FIRST_LINE.match(source)
        or _ODD_BLANK_FIRST_LINES.match(source)
        or _ESCAPE_AT_LINE_START.search("\n" + source)
        or ("?" in source and _HELP_AT_LINE_END.search(source))
        or _MAGIC_VALUE.search(source)
        or (
            ("\\" in source or "'''" in source or '"""' in source)
            and _BLANKS_ONLY_LINE.search(source)
        )
    )


DISPLAY_ONLY = frozenset(
    """matplotlib config load_ext unload_ext reload_ext autoreload aimport pinfo pinfo2 pdoc
    pdef psource pfile who whos who_ls lsmagic magic quickref history precision pprint colors
    xmode autocall automagic doctest_mode page alias_magic notebook killbgscripts
    html javascript js markdown latex svg
    kale_submit kale_jobs kale_logs kale_delete trainjob""".split()  # kale_ext's own: not job code
)
KEEP_CODE = frozenset({"time", "timeit", "capture", "prun"})
_PIP_COMMAND = re.compile(
    r"^\s*(?:(?:python3?|\S*/python3?)\s+-m\s+)?(?:uv\s+)?pip3?\s+(.*)$", re.S
)
_IPY_CALLS = frozenset({"run_line_magic", "run_cell_magic", "system", "getoutput"})


@dataclass
class CellCode:
    """A cell as plain Python, with the packages its install lines asked for (each with the
    1-based cell line that asked). Kept by the cell's source and shared (kept.py): never
    changed once made."""

    source: str
    origin: list[int] | None = None  # origin[i] = 1-based cell line of source line i+1
    packages: Sequence[tuple[str, int]] = field(default_factory=list)
    index_urls: Sequence[str] = field(default_factory=list)

    def cell_line(self, line: int | None) -> int | None:
        if line is None or self.origin is None:
            return line
        return self.origin[min(max(line, 1), len(self.origin)) - 1] if self.origin else line


class _Failed(Exception):
    def __init__(self, message: str, line: int | None, code: str):
        self.message, self.line, self.code = message, line, code


_manager = None


def _ipython_transform(source: str) -> str:
    fast = linemagics.transform(source)  # whole % and ! lines only: no tokenizer needed
    if fast is not None:
        return fast
    global _manager
    if _manager is None:
        from IPython.core.inputtransformer2 import TransformerManager

        _manager = TransformerManager()
    return _manager.transform_cell(source)


def transform_cell(cell: Cell, diagnostics: list[Diagnostic]) -> CellCode | None:
    """Plain Python for a cell, or None after appending an error to ``diagnostics``. The
    CellCode is kept by source (kept.py): shared, never to be changed."""
    outcome = _transformed(cell.source)
    if isinstance(outcome, CellCode):
        return outcome
    message, line, code = outcome
    diagnostics.append(Diagnostic("error", message, cell.index, cell.id, line, code))
    return None


@kept.by_source
def _transformed(source: str) -> CellCode | tuple[str, int | None, str]:
    """A source's CellCode, or its error: (message, cell line, code)."""
    try:
        return _transform(source, 0, automagic(source))
    except _Failed as f:
        return f.message, f.line, f.code
    except SyntaxError as e:
        return syntax_error_message(e), e.lineno, "syntax-error"


def syntax_error(cell: Cell, e: SyntaxError, code: CellCode | None = None) -> Diagnostic:
    """The error a cell's SyntaxError is, at its cell line (``code``: where the lines of the
    Python that did not parse come from)."""
    line = code.cell_line(e.lineno) if code else e.lineno
    return Diagnostic("error", syntax_error_message(e), cell.index, cell.id, line, "syntax-error")


def syntax_error_message(e: SyntaxError) -> str:
    text = f"syntax error: {e.msg}"
    if e.text and e.text.strip():
        text += f": {e.text.strip()}"
        word = _FIRST_WORD.match(e.text.strip())
        if word and word.group(1) in automagic_names():
            text += (
                f" (IPython runs a bare `{word.group(1)}` line as %{word.group(1)} only in a cell "
                f"of that one line: write %{e.text.strip()})"
            )
    return text


# IPython's automagic (IPython.core.prefilter), which InteractiveShell applies to a cell of one
# line after its static transforms: the line's first word (IPython's split_user_input: letters,
# digits, `_`, `.`, `*`) names a line magic (or an alias such as ls) and runs it, unless what
# follows starts with `=` or `,` (AssignmentChecker: `ls = 1`, `ls == 1`, `ls, b = 1, 2` stay
# Python) or the word is a Python builtin or keyword (IPython also leaves alone a name the
# kernel's namespace holds; a compile has no namespace).
_FIRST_WORD = re.compile(r"([A-Za-z_]\w*)(?=\s|$)")
_SPLIT = re.compile(r"([\w.*]*)(.*)", re.S)


def automagic(source: str) -> str | None:
    """What IPython makes of a one-line cell whose first word is a line magic's name: its call
    (`pip install x` → ``get_ipython().run_line_magic('pip', 'install x')``); None for any
    other cell."""
    if needs_ipython(source):  # escapes, prompts, an indented first line: not a bare magic
        return None
    lines = source.splitlines(keepends=True)
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None or len(lines) - first != 1:  # IPython drops leading blank lines only
        return None
    word, rest = _SPLIT.match(lines[first]).groups()  # type: ignore[union-attr]
    if word not in automagic_names() or rest.strip()[:1] in ("=", ","):
        return None
    blank = "\n" * first  # IPython drops them; kept, they keep the line's number
    return f"{blank}get_ipython().run_line_magic({word!r}, {rest.strip()!r})\n"


_AUTOMAGIC: frozenset[str] | None = None


def automagic_names() -> frozenset[str]:
    """The line magics (and aliases) a fresh IPython shell runs by automagic, less those a
    Python builtin or keyword shadows."""
    global _AUTOMAGIC
    if _AUTOMAGIC is None:
        import builtins
        import keyword

        from IPython.core import magics
        from IPython.core.alias import default_aliases
        from IPython.core.magic import Magics

        table = getattr(magics, "BUILTIN_LAZY_MAGICS", None)  # IPython 9.19 and later
        if table is not None:
            names = set(table["line"])
        else:
            names = {n for c in vars(magics).values() if isinstance(c, type)
                     and issubclass(c, Magics) and c.magics for n in c.magics["line"]}  # fmt: skip
        names |= {"ed", "hist", "rep"}  # InteractiveShell.init_magics' aliases
        names |= {alias for alias, _ in default_aliases()}
        shadowed = set(dir(builtins)) | set(keyword.kwlist)
        _AUTOMAGIC = frozenset(names - shadowed)
    return _AUTOMAGIC


def _transform(source: str, offset: int, transformed: str | None = None) -> CellCode:
    """Transform ``source`` whose first line is cell line ``offset + 1`` (``transformed``: what
    IPython makes of it, when known already)."""
    if transformed is None:
        if not needs_ipython(source):  # no install line: no packages (one empty tuple for all)
            return CellCode(source, _identity(source, offset) if offset else None, (), ())
        transformed = _ipython_transform(source)
    try:
        tree = ast.parse(transformed)
    except SyntaxError as e:
        e.lineno = _line_shift(source, transformed, e.lineno or 1) + offset
        raise
    shift = _continuations(source)
    origin = [offset + shift(i) for i in range(1, transformed.count("\n") + 2)]
    lines = transformed.splitlines(keepends=True)
    result = CellCode("", None, [], [])  # filled below
    edits: list[tuple[int, int, list[str], list[int]]] = []
    for node in ast.walk(tree):
        call = _ipython_call(node)
        if call is None:
            continue
        line = origin[node.lineno - 1]
        if not isinstance(node, ast.Expr):
            raise _Failed(
                f"the result of an IPython magic or shell command cannot be used in a job: "
                f"{lines[node.lineno - 1].strip()}",
                line,
                "magic-value",
            )
        kind, args = call
        indent = " " * node.col_offset
        new, new_origin = _replacement(kind, args, line, indent, result)
        if not new and node.col_offset:
            new, new_origin = [indent + "pass\n"], [line]
        edits.append((node.lineno, node.end_lineno or node.lineno, new, new_origin))
    new_origin_all = list(origin[: len(lines)])
    for start, end, new, new_origin in sorted(edits, reverse=True):
        lines[start - 1 : end] = new
        new_origin_all[start - 1 : end] = new_origin
    result.source = "".join(lines)
    result.origin = new_origin_all
    return result


def _identity(source: str, offset: int) -> list[int]:
    return [offset + i for i in range(1, source.count("\n") + 2)]


def _continuations(source: str):
    """Map a transformed line to its cell line: IPython joins `\\`-continued magic lines."""
    src_lines = source_lines(source)
    starts = []  # original start line of each logical line, in order
    i = 0
    while i < len(src_lines):
        starts.append(i + 1)
        is_magic = src_lines[i].lstrip()[:1] in ("%", "!") or re.search(r"=\s*[%!]", src_lines[i])
        while is_magic and src_lines[i].endswith("\\") and i + 1 < len(src_lines):
            i += 1
        i += 1

    def shift(t: int) -> int:
        return starts[t - 1] if t - 1 < len(starts) else t

    return shift


def _line_shift(source: str, transformed: str, line: int) -> int:
    return _continuations(source)(line)


def _ipython_call(node: ast.AST) -> tuple[str, list[str]] | None:
    """('run_line_magic', ['pip', 'install x']) for a get_ipython() call statement/expression."""
    call = node.value if isinstance(node, (ast.Expr, ast.Assign)) else None
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr in _IPY_CALLS
        and isinstance(call.func.value, ast.Call)
        and isinstance(call.func.value.func, ast.Name)
        and call.func.value.func.id == "get_ipython"
    ):
        return None
    args = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    return call.func.attr, args


def _replacement(kind, args, line, indent, result: CellCode):
    """New lines (and their cell lines) for one magic statement."""
    if kind == "system":
        return _shell(args[0], line, result)
    if kind == "getoutput":
        raise _Failed("shell output cannot be captured in a job", line, "shell-command")
    name = args[0]
    if kind == "run_line_magic":
        rest = args[1] if len(args) > 1 else ""
        if name == "pip":
            return _pip(rest, line, result)
        if name in DISPLAY_ONLY:
            return [], []
        if name in KEEP_CODE:
            code = _strip_options(rest) if name == "timeit" else rest
            return [indent + code.strip() + "\n"], [line]
        if name == "env":
            return _env(rest, line, indent)
        raise _Failed(_unsupported(f"%{name}"), line, "unsupported-magic")
    # run_cell_magic(name, line, body)
    magic_line, body = (args + ["", ""])[1:3]
    if name in DISPLAY_ONLY:
        return [], []
    if name in KEEP_CODE:
        inner = _transform(body, line)
        result.packages += inner.packages
        result.index_urls += inner.index_urls
        src_lines = inner.source.splitlines(keepends=True)
        if src_lines and not src_lines[-1].endswith("\n"):
            src_lines[-1] += "\n"
        return src_lines, list(inner.origin or _identity(inner.source, line))[: len(src_lines)]
    if name == "writefile":
        return _writefile(magic_line, body, line)
    raise _Failed(_unsupported(f"%%{name}"), line, "unsupported-magic")


def _unsupported(what: str) -> str:
    return (
        f"IPython magic `{what}` cannot run in a training job: rewrite it in Python "
        "(for a shell command, subprocess.run), or tag the cell `skip`"
    )


def _shell(command: str, line: int, result: CellCode):
    m = _PIP_COMMAND.match(command)
    if not m:
        first = command.strip().split()[0] if command.strip() else ""
        raise _Failed(
            f"shell command `!{first}` cannot run in a training job: rewrite it in Python "
            "(subprocess.run) or tag the cell `skip`",
            line,
            "shell-command",
        )
    if "$" in command or "{" in command:
        raise _Failed(
            "a pip line that expands variables cannot be compiled; write the package names",
            line,
            "pip-variable",
        )
    return _pip(m.group(1), line, result)


_PIP_FLAGS = {"-q", "--quiet", "-U", "--upgrade", "--user", "--pre", "--no-deps", "-v",
              "--verbose", "--no-cache-dir", "--force-reinstall", "--no-warn-script-location",
              "--break-system-packages", "--upgrade-strategy", "-qq", "-qqq"}  # fmt: skip
_PIP_VALUE_FLAGS = {"--upgrade-strategy", "--progress-bar", "-f", "--find-links", "--timeout"}


def _pip(args: str, line: int, result: CellCode):
    """Record the packages of a pip command; the command itself leaves the body."""
    try:
        words = shlex.split(args)
    except ValueError as e:
        raise _Failed(f"cannot read the pip command: {e}", line, "pip-syntax") from None
    if not words or words[0] != "install":
        return [], []  # pip list / show / freeze: display only
    from packaging.requirements import InvalidRequirement, Requirement

    it = iter(words[1:])
    for w in it:
        if w in ("-i", "--index-url"):
            result.index_urls.insert(0, next(it, ""))
        elif w == "--extra-index-url":
            result.index_urls.append(next(it, ""))
        elif w.startswith(("--index-url=", "--extra-index-url=")):
            key, _, url = w.partition("=")
            result.index_urls.insert(0, url) if key == "--index-url" else result.index_urls.append(
                url
            )
        elif w in ("-r", "--requirement", "-e", "--editable", "-c", "--constraint"):
            raise _Failed(
                f"`pip install {w}` cannot be compiled: list the packages themselves",
                line,
                "pip-option",
            )
        elif w in _PIP_VALUE_FLAGS:
            next(it, None)
        elif w.startswith("-"):
            continue
        elif "://" in w:
            result.packages.append((w, line))
        else:
            try:
                Requirement(w)
            except InvalidRequirement as e:
                raise _Failed(f"invalid package `{w}`: {e}", line, "pip-requirement") from None
            result.packages.append((w, line))
    return [], []


def _strip_options(code: str) -> str:
    """The statement of `%timeit [-n N] [-r R] [-p P] [-t -c -q -o] statement`."""
    rest = code.lstrip()
    while rest.startswith("-"):
        m = re.match(r"-([nrp])\s*\d+\s*|-[tcqo]+\s*", rest)
        if not m:
            break
        rest = rest[m.end() :]
    return rest


def _env(rest: str, line: int, indent: str):
    m = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*[= ]\s*(.*?)\s*$", rest)
    if not m:
        raise _Failed("`%env` without NAME=VALUE only displays; remove it", line, "env-magic")
    stmt = f"__import__('os').environ[{m[1]!r}] = {m[2]!r}; print({f'env: {m[1]}={m[2]}'!r})"
    return [f"{indent}{stmt}  # %env, as IPython does it\n"], [line]


def _writefile(magic_line: str, body: str, line: int):
    words = shlex.split(magic_line)
    append = any(w in ("-a", "--append") for w in words)
    paths = [w for w in words if not w.startswith("-")]
    if len(paths) != 1:
        raise _Failed("`%%writefile` needs exactly one file name", line, "writefile")
    mode = "a" if append else "w"
    return [
        f"with open({paths[0]!r}, {mode!r}, encoding='utf-8') as _kale_file:  # %%writefile\n",
        f"    _kale_file.write({body!r})\n",
    ], [line, line]
