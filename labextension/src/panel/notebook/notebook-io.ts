import type { INotebookContent } from '@jupyterlab/nbformat';
import type { INotebookModel, NotebookPanel } from '@jupyterlab/notebook';

import { fromMetadata, toMetadata } from '../../form/metadata';
import type { IJobForm } from '../../form/model';
import { ISweepForm, sweepFromMetadata } from '../../form/sweep';
import type { Kale } from '../../types';
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
 * The sweep settings the notebook's metadata holds.
 */
export function readSweep(model: INotebookModel): ISweepForm {
  const meta = model.getMetadata(METADATA_KEY) as { sweep?: unknown };
  return sweepFromMetadata(meta?.sweep);
}

/**
 * Keep the form (and the sweep settings) in the notebook's metadata,
 * through its model, so the change is part of the document and can be
 * undone; an empty form leaves no key behind.
 */
export function writeForm(
  model: INotebookModel,
  form: IJobForm,
  sweep?: ISweepForm
): void {
  const meta = toMetadata(form, sweep);
  const empty =
    Object.keys(meta.options).length === 0 &&
    Object.keys(meta.config).length === 0 &&
    !meta.sweep;
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
