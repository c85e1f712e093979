import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

import { errorMessage } from '../errors';
import { notebookOf } from '../panel/jobs/jobs-view';
import type { Kale } from '../types';
import { SKIP_TAG } from '../contract';
import { ISaved, loadOffer, resultCellSource } from './load-result';

/**
 * "Load into the notebook": a code cell that loads an ended job's result
 * (or lists its outputs) is inserted below the active cell of the notebook
 * the job came from (or else the current notebook), and selected; it is
 * not run. The notebook is changed as any edit changes it (dirty, one step
 * of its Undo). The row says where the cell went, or why not.
 */
export class ResultLoader {
  constructor(options: ResultLoader.IOptions) {
    this._options = options;
  }

  /**
   * Insert the cell for `job`; nothing when the row offers no load.
   */
  async load(job: Kale.IJobInfo): Promise<void> {
    const { saved, say } = this._options;
    const what = saved(job.name);
    const offer = loadOffer(job, what);
    if (!what || !offer?.enabled) {
      return;
    }
    try {
      const panel = await this._notebookFor(job);
      if (!panel) {
        throw new Error('Open a notebook to load the result into');
      }
      this._options.activate?.(panel); // in front first: then the cell is made active
      const index = await insertCodeCell(
        panel,
        resultCellSource(job.name, what)
      );
      const file = panel.context.localPath.split('/').pop();
      say(
        job.name,
        'info',
        `Inserted cell ${index + 1} of ${file}: run it to load ${offer.withResult ? 'the result' : 'the outputs'}`
      );
    } catch (reason) {
      say(job.name, 'error', errorMessage(reason));
    }
  }

  /**
   * The notebook the job came from (opened if it is not), else the current
   * one.
   */
  private async _notebookFor(
    job: Kale.IJobInfo
  ): Promise<NotebookPanel | null> {
    const { tracker, openNotebook } = this._options;
    const path = notebookOf(job);
    if (path) {
      const open = tracker.find(p => p.context.path === path);
      if (open) {
        return open;
      }
      const opened = openNotebook
        ? await openNotebook(path).catch(() => null)
        : null;
      if (opened) {
        return opened;
      }
    }
    return tracker.currentWidget;
  }

  private _options: ResultLoader.IOptions;
}

/**
 * Insert a code cell holding `source` below the notebook's active cell (at
 * the end when none is active), tagged to be left out of the job (it reads
 * a job's result in the kernel: it is not training code), make it the
 * active and only selected cell, in command mode, and bring it into view.
 * Returns its index.
 */
export async function insertCodeCell(
  panel: NotebookPanel,
  source: string
): Promise<number> {
  await panel.context.ready;
  const notebook = panel.content;
  const model = panel.model;
  if (!model) {
    throw new Error(`${panel.context.localPath} is not loaded`);
  }
  const index = notebook.activeCell
    ? notebook.activeCellIndex + 1
    : model.cells.length;
  model.sharedModel.insertCell(index, {
    cell_type: 'code',
    source,
    // made by the user's action, as JupyterLab's own "insert below"
    metadata: { trusted: true, tags: [SKIP_TAG] }
  });
  notebook.activeCellIndex = index;
  notebook.deselectAll();
  notebook.mode = 'command';
  await notebook.scrollToItem(index, 'center');
  return index;
}

export namespace ResultLoader {
  export interface IOptions {
    tracker: INotebookTracker;
    /** What an ended job saved (undefined until read). */
    saved: (name: string) => ISaved | undefined;
    /** Open a notebook by its path below the server root. */
    openNotebook?: (path: string) => Promise<NotebookPanel | null>;
    /** Bring a notebook to the front. */
    activate?: (panel: NotebookPanel) => void;
    /** Say something at the job's row. */
    say: (name: string, kind: 'info' | 'error', text: string) => void;
  }
}
