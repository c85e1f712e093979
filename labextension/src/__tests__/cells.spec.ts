import type { NotebookPanel } from '@jupyterlab/notebook';

import { ActiveCellWatcher, showDiagnosticCell } from '../panel/notebook/cells';
import type { Kale } from '../types';
import { activeNotebook, fakeNotebook } from './fakes';

describe('ActiveCellWatcher', () => {
  it('shows the active cell and follows its tags', () => {
    const { nb, tracker, changed, follow } = activeNotebook();
    const watcher = new ActiveCellWatcher(follow);
    expect(watcher.current).toBeNull(); // until it looks
    watcher.refresh();
    expect(watcher.current).toEqual({ index: 0, type: 'code', tags: [] });

    nb.cell.model.setMetadata('tags', ['skip']);
    expect(watcher.current).toEqual({ index: 0, type: 'code', tags: ['skip'] });
    expect(changed).toHaveBeenCalledTimes(2);

    // No active cell any more: nothing to show, the old cell is let go.
    tracker.activeCell = null;
    tracker.activeCellChanged.emit(null);
    expect(watcher.current).toBeNull();
    nb.cell.model.setMetadata('tags', ['imports']);
    expect(watcher.current).toBeNull();

    watcher.dispose();
    tracker.activeCell = nb.cell;
    tracker.activeCellChanged.emit(null);
    expect(watcher.current).toBeNull(); // disposed: no longer follows
  });

  it('names no cell before the notebook is read (its cell type is not known)', async () => {
    let read = () => undefined as void;
    const ready = new Promise<void>(r => (read = r));
    const { nb, follow } = activeNotebook({ ready });
    const watcher = new ActiveCellWatcher(follow);
    watcher.refresh();
    expect(watcher.current).toBeNull();
    read();
    await nb.panel.context.ready;
    watcher.refresh();
    expect(watcher.current).toEqual({ index: 0, type: 'code', tags: [] });
    watcher.dispose();
  });

  it('shows no cell outside the bound notebook', () => {
    const { follow } = activeNotebook();
    const watcher = new ActiveCellWatcher({ ...follow, notebook: () => null });
    watcher.refresh();
    expect(watcher.current).toBeNull();
    watcher.dispose();
  });
});

describe('showDiagnosticCell', () => {
  const diagnostic = (cell: number | null, cell_id?: string) =>
    ({ severity: 'error', message: '', cell, cell_id }) as Kale.IDiagnostic;

  it("selects a diagnostic's cell, by id first", async () => {
    const { panel, notebook } = fakeNotebook();
    const activate = jest.fn();
    await showDiagnosticCell(
      panel as unknown as NotebookPanel,
      diagnostic(5, 'c1'),
      activate
    );
    expect(activate).toHaveBeenCalledWith(panel);
    expect(notebook.activeCellIndex).toBe(0);
    expect(notebook.mode).toBe('command');
    expect(notebook.scrollToItem).toHaveBeenCalledWith(0, 'center');
  });

  it("puts the cursor at the start of a diagnostic's line", async () => {
    const { panel, notebook, cell } = fakeNotebook();
    const editor = {
      lineCount: 3,
      setCursorPosition: jest.fn(),
      focus: jest.fn()
    };
    (cell as { editor?: unknown }).editor = editor;
    const show = (line: number | null) =>
      showDiagnosticCell(
        panel as unknown as NotebookPanel,
        { ...diagnostic(0), line },
        jest.fn()
      );
    await show(2);
    expect(editor.setCursorPosition).toHaveBeenLastCalledWith({
      line: 1,
      column: 0
    });
    expect(editor.focus).toHaveBeenCalled();
    expect(notebook.mode).toBe('edit');
    await show(9); // past the cell's end (the cell changed): its last line
    expect(editor.setCursorPosition).toHaveBeenLastCalledWith({
      line: 2,
      column: 0
    });
    await show(null); // no line: the cell is selected, in command mode
    expect(editor.setCursorPosition).toHaveBeenCalledTimes(2);
    expect(notebook.mode).toBe('command');
  });

  it('falls back to the index, and leaves the notebook alone past its end', async () => {
    const { panel, notebook } = fakeNotebook();
    const activate = jest.fn();
    const show = (d: Kale.IDiagnostic) =>
      showDiagnosticCell(panel as unknown as NotebookPanel, d, activate);
    await show(diagnostic(3, 'gone'));
    await show(diagnostic(null));
    expect(activate).not.toHaveBeenCalled();
    expect(notebook.activeCellIndex).toBe(-1);
    expect(notebook.mode).toBe('edit');

    await show(diagnostic(0, 'gone'));
    expect(notebook.activeCellIndex).toBe(0);
  });
});
