import type { INotebookContent } from '@jupyterlab/nbformat';
import type { INotebookModel, NotebookPanel } from '@jupyterlab/notebook';

import { fromMetadata, toMetadata } from '../form/metadata';
import type { IJobForm } from '../form/model';
import type { Kale } from '../types';
import { undoableMetadataChange } from './undo';

/**
 * The notebook metadata key the panel owns.
 */
export const METADATA_KEY = 'kale_ext';

/**
 * The form the notebook's metadata holds.
 */
export function readForm(model: INotebookModel): IJobForm {
  return fromMetadata(model.getMetadata(METADATA_KEY));
}

/**
 * Keep the form in the notebook's metadata, through its model, so the
 * change is part of the document and can be undone; an empty form leaves
 * no key behind.
 */
export function writeForm(model: INotebookModel, form: IJobForm): void {
  const meta = toMetadata(form);
  const empty =
    Object.keys(meta.options).length === 0 &&
    Object.keys(meta.config).length === 0;
  undoableMetadataChange(model, () => {
    if (!empty) {
      model.setMetadata(METADATA_KEY, meta);
    } else if (model.getMetadata(METADATA_KEY) !== undefined) {
      model.deleteMetadata(METADATA_KEY);
    }
  });
}

/**
 * The notebook to send. Compile always sends the model's JSON, so unsaved
 * changes count; submit (`preferPath`) sends the path when the file is
 * saved (the job then records where it came from).
 */
export function notebookSource(
  panel: NotebookPanel | null,
  preferPath: boolean
): Kale.NotebookSource | null {
  const model = panel?.model;
  if (!panel || !model) {
    return null;
  }
  if (preferPath && !model.dirty) {
    return { path: panel.context.localPath };
  }
  // the content as it is now (unsaved edits count); the path names the job
  return {
    notebook: model.toJSON() as INotebookContent,
    path: panel.context.localPath
  };
}
