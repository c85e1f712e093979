"""What the compiler reads from each cell of the body: its names (analyse), the cell line of
each line of its code, its imports, what a left-out cell defines (to explain an error about
those names) and the settings a cell sets (merged, a conflict warned about)."""

from __future__ import annotations

import ast
from collections.abc import Mapping

from ..errors import Diagnostic
from . import kept
from .analysis import BodyCell, cell_names
from .entrypoint import drives_trainer_client
from .notebook import Cell, Role
from .packages import imports_of
from .transform import CellCode, syntax_error, transform_cell


def left_out_of_entrypoint(cell: Cell, entry: Cell, left_out: LeftOut, diags) -> None:
    """An untagged cell of an entrypoint notebook: not part of the job."""
    code = transform_cell(cell, [])
    if code is None:
        return
    why = f"not part of the job (the job is the entrypoint function in cell {entry.index + 1})"
    note_left_out(cell, Role.SKIP, left_out, why)
    if drives_trainer_client(code.source):
        diags.append(
            Diagnostic(
                "warning",
                "this cell drives TrainerClient: it is left out of the job (kale_ext submits it)",
                cell.index,
                cell.id,
                None,
                "trainer-client-cell",
            )
        )


def analyse(body, diags: list[Diagnostic]) -> list[BodyCell]:
    analysed = []
    future_annotations = any(
        "__future__" in code.source and "annotations" in code.source for _, _, code in body
    )
    for role, cell, code in body:
        try:
            names = cell_names(code.source, future_annotations)
        except SyntaxError as e:
            diags.append(syntax_error(cell, e, code))
            continue
        for line, what in names.invalid:
            if role is Role.ENTRYPOINT and what.startswith("`return`"):
                continue  # the entrypoint's own body: `return` ends the function, as it did
            diags.append(
                Diagnostic(
                    "error", what, cell.index, cell.id, code.cell_line(line), "not-in-function"
                )
            )
        analysed.append(BodyCell(cell, names, code.source, code.cell_line))
    if len(analysed) != len(body):  # keep body and analysis aligned for the caller
        keep = {bc.cell.index for bc in analysed}
        body[:] = [item for item in body if item[1].index in keep]
    return analysed


def cell_lines(code: CellCode) -> tuple[int, ...] | None:
    """The cell's line of each line of the cell's code, None when they are the same."""
    if code.origin is None:
        return None
    count = code.source.count("\n") + 1
    lines = tuple(code.cell_line(n) or n for n in range(1, count + 1))
    return None if lines == tuple(range(1, count + 1)) else lines


def imports_in(source: str) -> tuple[tuple[str, int], ...]:
    return imports_kept(source) if "import" in source else ()


@kept.by_source
def imports_kept(source: str) -> tuple[tuple[str, int], ...]:
    return tuple(imports_of(ast.parse(source)))


def note_left_out(cell: Cell, role: Role, left_out: LeftOut, why: str | None = None) -> None:
    """Remember a left-out cell, to explain errors about the names it defines."""
    if why is None:
        why = (
            "tagged skip"
            if role is Role.SKIP
            else f"tagged {role.value} (not part of the function)"
        )
    left_out.cells.append((cell, why))


class LeftOut(Mapping):
    """What the cells left out of the body define: a name -> (the first such cell, why it is
    left out). Its cells are read only when asked (an undefined name to explain): most
    compiles never ask, and each read is a transform and a symbol table."""

    def __init__(self) -> None:
        self.cells: list[tuple[Cell, str]] = []
        self._names: dict[str, tuple[Cell, str]] | None = None

    def _by_name(self) -> dict[str, tuple[Cell, str]]:
        if self._names is None:
            self._names = {}
            for cell, why in self.cells:
                code = transform_cell(cell, [])
                if code is None:
                    continue
                try:
                    names = cell_names(code.source)
                except SyntaxError:
                    continue
                for n in names.binds:
                    self._names.setdefault(n, (cell, why))
        return self._names

    def __getitem__(self, name: str) -> tuple[Cell, str]:
        return self._by_name()[name]

    def __iter__(self):
        return iter(self._by_name())

    def __len__(self) -> int:
        return len(self._by_name())


def merge_settings(settings: dict, new: dict, cell: Cell, diags: list[Diagnostic]) -> None:
    for key, value in new.items():
        if isinstance(value, dict):
            target = settings.setdefault(key, {})
            for k, v in value.items():
                if k in target and target[k] != v:
                    diags.append(
                        Diagnostic(
                            "warning",
                            f"`{key}` `{k}` is set to {target[k]!r} by an earlier cell and to "
                            f"{v!r} here; the job uses {v!r}",
                            cell.index,
                            cell.id,
                            None,
                            "setting-conflict",
                        )
                    )
                target[k] = v
        else:
            settings[key] = value
