import type { INotebookModel, NotebookPanel } from '@jupyterlab/notebook';

import { emptyForm } from '../form/model';
import {
  METADATA_KEY,
  notebookSource,
  readForm,
  writeForm
} from '../panel/notebook/notebook-io';
import { fakeNotebook } from './fakes';

const asModel = (m: unknown) => m as INotebookModel;
const asPanel = (p: unknown) => p as NotebookPanel;

describe('readForm and writeForm', () => {
  it("keep the form in the notebook's own metadata key", () => {
    const { model } = fakeNotebook();
    writeForm(asModel(model), {
      ...emptyForm(),
      nodes: '2',
      memoryLimit: '4Gi'
    });
    expect(METADATA_KEY).toBe('kale_ext');
    expect(model.metadata.kale_ext).toEqual({
      options: { nodes: 2 },
      config: { limits: { memory: '4Gi' } }
    });
    const form = readForm(asModel(model));
    expect(form.nodes).toBe('2');
    expect(form.memoryLimit).toBe('4Gi');
  });

  it('leave no key behind for an empty form, and write none that is not there', () => {
    const { model } = fakeNotebook({
      metadata: { options: { nodes: 2 }, config: {} }
    });
    writeForm(asModel(model), emptyForm());
    expect(METADATA_KEY in model.metadata).toBe(false);
    const writes = model.writes;
    writeForm(asModel(model), emptyForm());
    expect(model.writes).toBe(writes);
    expect(readForm(asModel(model))).toEqual(emptyForm());
  });
});

describe('notebookSource', () => {
  it('sends the JSON to compile, the path of a saved notebook to submit', () => {
    const { panel, model } = fakeNotebook();
    expect(notebookSource(asPanel(panel), true)).toEqual({
      path: 'dir/nb.ipynb'
    });
    expect(notebookSource(asPanel(panel), false)).toEqual({
      notebook: model.toJSON(),
      path: 'dir/nb.ipynb'
    });
    model.dirty = true; // unsaved edits count
    expect(notebookSource(asPanel(panel), true)).toEqual({
      notebook: model.toJSON(),
      path: 'dir/nb.ipynb'
    });
    expect(notebookSource(null, true)).toBeNull();
  });
});
