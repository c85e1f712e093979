import type { Cell } from '@jupyterlab/cells';
import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

import { cellTags, chooseRole, roleOf, roleTags } from '../../tags/tags';
import type { Kale } from '../../types';
import { type ITransactor, undoableStep } from './undo';

/**
 * The role of the active cell, set from the tag editor: one role per cell,
 * and the last change kept to be taken back (the notebook's Undo takes it
 * back too).
 */
export class CellRoles {
  constructor(options: CellRoles.IOptions) {
    this._options = options;
  }

  /**
   * The last role change made here, while its cell is the active one.
   */
  get change(): IRoleChange | null {
    const change = this._change;
    return change && change.cell === this._options.tracker.activeCell
      ? change
      : null;
  }

  /**
   * Give the active cell a role (its role tag; null: untagged).
   */
  choose(tag: string | null): void {
    const cell = this._options.tracker.activeCell;
    if (!cell) {
      return;
    }
    const shared = this._options.notebook()?.model?.sharedModel ?? null;
    const change = setCellRole(cell, tag, this._options.grammar(), shared);
    if (change) {
      this._change = change;
      this._options.changed();
    }
  }

  /**
   * Take the last role change back.
   */
  undo(): void {
    if (this._change) {
      undoRoleChange(this._change);
      this._change = null;
      this._options.changed();
    }
  }

  /**
   * Forget the last change (another notebook).
   */
  forget(): void {
    this._change = null;
  }

  private _options: CellRoles.IOptions;
  private _change: IRoleChange | null = null;
}

export namespace CellRoles {
  export interface IOptions {
    tracker: INotebookTracker;
    /** The notebook the panel is bound to. */
    notebook: () => NotebookPanel | null;
    /** The server's tag grammar. */
    grammar: () => Kale.ITag[];
    /** Called when a change was made or taken back. */
    changed: () => void;
  }
}

/**
 * A change of a cell's role, to undo it.
 */
export interface IRoleChange {
  cell: Cell;
  /** The cell's tags before and after. */
  before: string[];
  after: string[];
  /** The roles before and after (null: untagged). */
  from: string | null;
  to: string | null;
  /** The notebook's shared model (the change is a step of its Undo). */
  notebook: ITransactor | null;
}

/**
 * Give a cell the role tag `tag` (null: no role), in place of its other
 * role tags (one role per cell); other tags stay. Returns the change, or
 * null when the cell already had that role. With `notebook`, the change is
 * a step of the notebook's Undo.
 */
export function setCellRole(
  cell: Cell,
  tag: string | null,
  grammar: Kale.ITag[],
  notebook: ITransactor | null = null
): IRoleChange | null {
  const offered = roleTags(grammar).map(t => t.tag);
  const before = cellTags(cell.model.getMetadata('tags'));
  const from = roleOf(before, grammar);
  const to = tag === null ? null : (roleOf([tag], grammar) ?? tag);
  if (from === to) {
    return null; // a radio choice: choosing the current role changes nothing
  }
  const after = chooseRole(before, tag, offered);
  writeTags(cell, after, notebook);
  return { cell, before, after, from, to, notebook };
}

/**
 * Undo a role change, unless the cell's tags changed since.
 */
export function undoRoleChange(change: IRoleChange): boolean {
  const { cell } = change;
  if (
    cell.isDisposed ||
    JSON.stringify(cellTags(cell.model.getMetadata('tags'))) !==
      JSON.stringify(change.after)
  ) {
    return false;
  }
  writeTags(cell, change.before, change.notebook);
  return true;
}

/**
 * Write a cell's tags, as one step of the notebook's Undo when `notebook`
 * (its shared model) is given: JupyterLab writes metadata outside of the
 * undo history, but inside the notebook's undoable transaction it is in it.
 */
function writeTags(
  cell: Cell,
  tags: string[],
  notebook: ITransactor | null
): void {
  const write = () => {
    if (tags.length > 0) {
      cell.model.setMetadata('tags', tags);
    } else {
      cell.model.deleteMetadata('tags');
    }
  };
  if (notebook) {
    undoableStep(notebook, write);
  } else {
    write();
  }
}
