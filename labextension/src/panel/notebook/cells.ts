import type { Cell } from '@jupyterlab/cells';
import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import type { IDisposable } from '@lumino/disposable';
import { Signal } from '@lumino/signaling';

import { cellTags } from '../../tags/tags';
import type { Kale } from '../../types';
import { notebookOf } from '../jobs/jobs-view';

/**
 * The active cell, as the tag editor shows it.
 */
export interface IActiveCell {
  index: number;
  type: string;
  tags: string[];
}

/**
 * Follows the tracker's active cell and its tags, in the notebook the panel
 * is bound to.
 */
export class ActiveCellWatcher implements IDisposable {
  constructor(options: ActiveCellWatcher.IOptions) {
    this._tracker = options.tracker;
    this._notebook = options.notebook;
    this._changed = options.changed;
    this._tracker.activeCellChanged.connect(this.refresh, this);
  }

  /** The active cell, or null when there is none in the bound notebook. */
  current: IActiveCell | null = null;

  get isDisposed(): boolean {
    return this._disposed;
  }

  /**
   * Look at the active cell again (the cell or the notebook changed).
   */
  refresh(): void {
    const cell = this._tracker.activeCell;
    if (cell !== this._cell) {
      this._cell?.model.metadataChanged.disconnect(this._update, this);
      this._cell = cell;
      cell?.model.metadataChanged.connect(this._update, this);
    }
    this._update();
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    Signal.clearData(this);
  }

  private _update(): void {
    const cell = this._cell;
    const panel = this._notebook();
    const notebook = panel?.content;
    // (before its file is read, a notebook holds a placeholder code cell)
    if (!cell || !notebook || cell.isDisposed || !panel?.context.isReady) {
      this.current = null;
    } else {
      this.current = {
        index: notebook.widgets.indexOf(cell),
        type: cell.model.type,
        tags: cellTags(cell.model.getMetadata('tags'))
      };
    }
    this._changed();
  }

  private _tracker: INotebookTracker;
  private _notebook: () => NotebookPanel | null;
  private _changed: () => void;
  private _cell: Cell | null = null;
  private _disposed = false;
}

export namespace ActiveCellWatcher {
  export interface IOptions {
    tracker: INotebookTracker;
    /** The notebook the panel is bound to. */
    notebook: () => NotebookPanel | null;
    /** Called whenever the active cell (or its tags) was looked at again. */
    changed: () => void;
  }
}

/**
 * Select and show the cell a diagnostic is about (by its id first, else its
 * index), bringing its notebook to the front with `activate`; with a line,
 * the cursor goes to the start of that line, in edit mode.
 */
export async function showDiagnosticCell(
  panel: NotebookPanel,
  diagnostic: Kale.IDiagnostic,
  activate: (panel: NotebookPanel) => void
): Promise<void> {
  const notebook = panel.content;
  let index = diagnostic.cell_id
    ? notebook.widgets.findIndex(w => w.model.id === diagnostic.cell_id)
    : -1;
  if (index < 0 && typeof diagnostic.cell === 'number') {
    index = diagnostic.cell;
  }
  if (index < 0 || index >= notebook.widgets.length) {
    return;
  }
  activate(panel);
  notebook.mode = 'command';
  notebook.deselectAll();
  notebook.activeCellIndex = index;
  await notebook.scrollToItem(index, 'center');
  const editor = notebook.widgets[index]?.editor;
  const line = diagnostic.line;
  if (editor && typeof line === 'number' && line >= 1) {
    const last = Math.max(editor.lineCount - 1, 0);
    editor.setCursorPosition({ line: Math.min(line - 1, last), column: 0 });
    notebook.mode = 'edit';
    editor.focus();
  }
}

/**
 * Open the notebook a job failed in (its path below the server root) at the
 * cell and line its failure names.
 */
export async function showFailureCell(
  job: Kale.IJobInfo,
  open: (path: string) => Promise<NotebookPanel | null>,
  activate: (panel: NotebookPanel) => void
): Promise<void> {
  const path = notebookOf(job);
  const failure = job.failure;
  if (!path || !failure || typeof failure.cell_index !== 'number') {
    return;
  }
  const panel = await open(path);
  if (!panel) {
    return;
  }
  await panel.context.ready;
  await showDiagnosticCell(
    panel,
    {
      severity: 'error',
      message: failure.summary,
      cell: failure.cell_index,
      cell_id: failure.cell_id,
      line: failure.line
    },
    activate
  );
}
