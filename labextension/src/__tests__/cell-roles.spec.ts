import type { Cell } from '@jupyterlab/cells';

import {
  CellRoles,
  setCellRole,
  undoRoleChange
} from '../panel/notebook/cell-roles';
import { activeNotebook, fakeNotebook, GRAMMAR } from './fakes';

describe('setCellRole', () => {
  const role = (cell: unknown, tag: string | null) =>
    setCellRole(cell as Cell, tag, GRAMMAR);

  it('sets one role at a time and keeps the other tags', () => {
    const { cell } = fakeNotebook();
    cell.model.tags = ['pipeline-parameters', 'other'];
    expect(role(cell, 'imports')).toMatchObject({
      before: ['pipeline-parameters', 'other'],
      after: ['other', 'imports'],
      from: 'parameters',
      to: 'imports'
    });
    expect(cell.model.tags).toEqual(['other', 'imports']);
  });

  it('is a single choice: the current role again changes nothing', () => {
    const { cell } = fakeNotebook();
    cell.model.tags = ['imports'];
    expect(role(cell, 'imports')).toBeNull();
    expect(cell.model.tags).toEqual(['imports']);
  });

  it('untags a cell only when asked to, removing the tags key', () => {
    const { cell } = fakeNotebook();
    cell.model.tags = ['skip'];
    expect(role(cell, null)).toMatchObject({ from: 'skip', to: null });
    expect(cell.model.tags).toBeUndefined();
    expect(role(cell, null)).toBeNull();
  });

  it('undoes a change, unless the tags changed since', () => {
    const { cell } = fakeNotebook();
    cell.model.tags = ['pipeline-parameters'];
    const change = role(cell, 'skip')!;
    expect(undoRoleChange(change)).toBe(true);
    expect(cell.model.tags).toEqual(['pipeline-parameters']);

    const again = role(cell, 'skip')!;
    cell.model.tags = ['imports']; // someone else changed them
    expect(undoRoleChange(again)).toBe(false);
    expect(cell.model.tags).toEqual(['imports']);
  });
});

describe('CellRoles', () => {
  it("sets the active cell's role as one step of the notebook's Undo, and takes it back", () => {
    const { nb, tracker, changed, follow } = activeNotebook();
    const roles = new CellRoles({ ...follow, grammar: () => GRAMMAR });
    nb.cell.model.tags = ['pipeline-parameters', 'other'];
    roles.choose('imports');
    expect(nb.cell.model.tags).toEqual(['other', 'imports']);
    expect(nb.model.undoableWrites).toBe(1);
    expect(roles.change).toMatchObject({ from: 'parameters', to: 'imports' });
    roles.choose('imports'); // the same role: nothing
    expect(changed).toHaveBeenCalledTimes(1);

    // Only while its cell is the active one.
    tracker.activeCell = null;
    expect(roles.change).toBeNull();
    tracker.activeCell = nb.cell;
    roles.undo();
    expect(nb.cell.model.tags).toEqual(['pipeline-parameters', 'other']);
    expect(roles.change).toBeNull();
    expect(changed).toHaveBeenCalledTimes(2);
  });
});
