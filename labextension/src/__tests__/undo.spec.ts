import { NotebookModel } from '@jupyterlab/notebook';

import { undoableMetadataChange, undoableStep } from '../panel/notebook/undo';

/**
 * End the current undo step (changes within 500 ms are one step).
 */
function stopCapturing(model: NotebookModel): void {
  (
    model.sharedModel as unknown as { undoManager: { stopCapturing(): void } }
  ).undoManager.stopCapturing();
}

describe('undoableMetadataChange', () => {
  it("puts the panel's metadata writes, and only those, in the notebook's undo history", () => {
    // (yjs warns about a standalone model's cells: not what is tested here)
    jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    const model = new NotebookModel();
    model.sharedModel.insertCell(0, { cell_type: 'code', source: 'x = 1' });
    model.sharedModel.clearUndoHistory();

    // Someone else's metadata write (a kernel's language_info): not undoable.
    model.setMetadata('language_info', { name: 'python' });
    undoableMetadataChange(model, () =>
      model.setMetadata('kale_ext', { options: { nodes: 2 }, config: {} })
    );
    stopCapturing(model);
    undoableMetadataChange(model, () =>
      model.setMetadata('kale_ext', { options: { nodes: 4 }, config: {} })
    );
    stopCapturing(model);
    model.setMetadata('language_info', { name: 'python', version: '3.11' });
    expect(model.sharedModel.canUndo()).toBe(true);

    model.sharedModel.undo();
    expect(model.getMetadata('kale_ext')).toEqual({
      options: { nodes: 2 },
      config: {}
    });
    model.sharedModel.undo();
    expect(model.getMetadata('kale_ext')).toBeUndefined();
    expect(model.sharedModel.canUndo()).toBe(false);
    expect(model.getMetadata('language_info')).toEqual({
      name: 'python',
      version: '3.11'
    });

    model.sharedModel.redo();
    expect(model.getMetadata('kale_ext')).toEqual({
      options: { nodes: 2 },
      config: {}
    });

    // The cells' history works as before.
    model.sharedModel.insertCell(1, { cell_type: 'code', source: 'y = 2' });
    expect(model.cells.length).toBe(2);
    model.sharedModel.undo();
    expect(model.cells.length).toBe(1);
    model.dispose();
    jest.restoreAllMocks();
  });
});

describe('undoableStep', () => {
  it('makes each change a step of its own, even two made at once', () => {
    jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    const model = new NotebookModel();
    model.sharedModel.insertCell(0, {
      cell_type: 'code',
      source: 'epochs = 6',
      metadata: { tags: ['parameters'] }
    });
    model.sharedModel.clearUndoHistory();
    const cell = model.cells.get(0);
    const tags = () => cell.getMetadata('tags');

    // Two role changes well within the history's 500 ms capture window.
    undoableStep(model.sharedModel, () =>
      cell.setMetadata('tags', ['training'])
    );
    undoableStep(model.sharedModel, () => cell.deleteMetadata('tags'));
    expect(tags()).toBeUndefined();

    // One Undo takes back the last change only.
    model.sharedModel.undo();
    expect(tags()).toEqual(['training']);
    model.sharedModel.undo();
    expect(tags()).toEqual(['parameters']);
    expect(model.sharedModel.canUndo()).toBe(false);
    model.dispose();
    jest.restoreAllMocks();
  });
});
