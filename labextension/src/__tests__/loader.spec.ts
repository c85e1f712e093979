import { NotebookModel } from '@jupyterlab/notebook';
import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

import type { ISaved } from '../results/load-result';
import { ResultLoader } from '../results/loader';
import type { Kale } from '../types';
import { jobInfo } from './fakes';

/**
 * A notebook panel over a real notebook model of `cells` code cells, its
 * cell `active` the active one (-1: none).
 */
function notebookAt(path: string, cells: string[], active: number) {
  // (yjs warns about a standalone model's cells: not what is tested here)
  jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  const model = new NotebookModel();
  model.sharedModel.insertCells(
    0,
    cells.map(source => ({ cell_type: 'code', source }))
  );
  model.sharedModel.clearUndoHistory();
  model.dirty = false;
  const content = {
    activeCellIndex: active,
    get activeCell() {
      return this.activeCellIndex >= 0 ? {} : null;
    },
    mode: 'edit',
    deselectAll: jest.fn(),
    scrollToItem: jest.fn().mockResolvedValue(undefined)
  };
  const panel = {
    model,
    content,
    context: { path, localPath: path, ready: Promise.resolve() }
  };
  return { panel: panel as unknown as NotebookPanel, model, content };
}

type Notebook = ReturnType<typeof notebookAt>;

const SAVED: ISaved = {
  result: { saved: true, format: 'json', size: 10, reason: null },
  files: null
};

function setUp(options: {
  open: Notebook[];
  current?: Notebook | null;
  saved?: ISaved;
  openNotebook?: (path: string) => Promise<NotebookPanel | null>;
}) {
  const tracker = {
    find: (fn: (p: NotebookPanel) => boolean) =>
      options.open.map(n => n.panel).find(fn),
    currentWidget: options.current?.panel ?? null
  } as unknown as INotebookTracker;
  const say = jest.fn();
  const activate = jest.fn();
  const loader = new ResultLoader({
    tracker,
    saved: () => ('saved' in options ? options.saved : SAVED),
    openNotebook: options.openNotebook,
    activate,
    say
  });
  return { loader, say, activate };
}

const job = (name = 'nb-k3v9q', notebook = 'a/nb.ipynb'): Kale.IJobInfo =>
  jobInfo(name, { 'kale-ext.io/notebook': notebook });

const sources = (n: Notebook) =>
  n.model.sharedModel.cells.map(c => c.getSource());

describe('ResultLoader', () => {
  afterEach(() => jest.restoreAllMocks());

  it('inserts the cell below the active cell of the job’s notebook, selects it, runs nothing', async () => {
    const own = notebookAt('a/nb.ipynb', ['import torch', 'train()', 'x'], 1);
    const other = notebookAt('b/other.ipynb', ['y'], 0);
    const { loader, say, activate } = setUp({
      open: [own, other],
      current: other
    });
    await loader.load(job());
    expect(sources(own)).toEqual([
      'import torch',
      'train()',
      'from kale_ext import get_job\nresult = get_job("nb-k3v9q").result()\n# get_job("nb-k3v9q").outputs: the files it wrote; .load("name") reads one\nresult',
      'x'
    ]);
    const cell = own.model.sharedModel.cells[2];
    expect(cell.cell_type).toBe('code');
    // left out of the job: it is no training code (the compiler's skip tag)
    expect(cell.getMetadata('tags')).toEqual(['skip']);
    expect(cell.toJSON().outputs).toEqual([]);
    expect(cell.toJSON().execution_count).toBeNull();
    expect(own.model.dirty).toBe(true);
    // one step of the notebook's Undo, as any edit
    own.model.sharedModel.undo();
    expect(sources(own)).toEqual(['import torch', 'train()', 'x']);
    expect(own.content.activeCellIndex).toBe(2);
    expect(own.content.deselectAll).toHaveBeenCalled();
    expect(own.content.mode).toBe('command');
    expect(own.content.scrollToItem).toHaveBeenCalledWith(2, 'center');
    expect(sources(other)).toEqual(['y']);
    expect(other.model.dirty).toBe(false);
    expect(activate).toHaveBeenCalledWith(own.panel);
    expect(say).toHaveBeenCalledWith(
      'nb-k3v9q',
      'info',
      'Inserted cell 3 of nb.ipynb: run it to load the result'
    );
  });

  it('opens the job’s notebook when it is not open', async () => {
    const own = notebookAt('a/nb.ipynb', ['a'], 0);
    const openNotebook = jest.fn(async () => own.panel);
    const { loader } = setUp({ open: [], openNotebook });
    await loader.load(job());
    expect(openNotebook).toHaveBeenCalledWith('a/nb.ipynb');
    expect(sources(own)[1]).toContain('result = get_job("nb-k3v9q").result()');
  });

  it('falls back to the current notebook (at its end when no cell is active)', async () => {
    const current = notebookAt('c/here.ipynb', ['a', 'b'], -1);
    const { loader, say } = setUp({
      open: [current],
      current,
      openNotebook: async () => {
        throw new Error('a/nb.ipynb: no such file');
      },
      saved: { result: null, files: ['digits_model.pt', 'log.csv'] }
    });
    await loader.load(job());
    expect(sources(current)).toEqual([
      'a',
      'b',
      [
        'from kale_ext import get_job',
        '# nb-k3v9q saved no result; it wrote 2 output files: digits_model.pt, log.csv',
        'outputs = get_job("nb-k3v9q").outputs',
        '# outputs.load("digits_model.pt") reads one',
        'outputs'
      ].join('\n')
    ]);
    expect(current.model.sharedModel.cells[2].getMetadata('tags')).toEqual([
      'skip'
    ]);
    expect(say).toHaveBeenCalledWith(
      'nb-k3v9q',
      'info',
      'Inserted cell 3 of here.ipynb: run it to load the outputs'
    );
  });

  it('says at the row when no notebook is open', async () => {
    const { loader, say } = setUp({ open: [], current: null });
    await loader.load(job());
    expect(say).toHaveBeenCalledWith(
      'nb-k3v9q',
      'error',
      'Open a notebook to load the result into'
    );
  });

  it.each([
    ['nothing was saved', { result: null, files: [] }],
    ['what was saved is not read yet', undefined]
  ])('changes no notebook when %s', async (_, saved) => {
    const own = notebookAt('a/nb.ipynb', ['a'], 0);
    const { loader, say } = setUp({ open: [own], current: own, saved });
    await loader.load(job());
    expect(sources(own)).toEqual(['a']);
    expect(own.model.dirty).toBe(false);
    expect(say).not.toHaveBeenCalled();
  });
});
