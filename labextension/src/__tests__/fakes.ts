/**
 * Stand-ins for JupyterLab's notebook objects and the server's answers,
 * shared by the specs (this file holds no tests).
 */
import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { Signal } from '@lumino/signaling';

import type { IJobsProps } from '../panel/jobs/jobs';
import { DEFAULT_VIEW } from '../panel/jobs/jobs-view';
import type { Kale } from '../types';

const copy = <T>(v: T): T =>
  v === undefined ? v : JSON.parse(JSON.stringify(v));

/**
 * A tag grammar as `GET tags` answers it: a tag per role, Kale's names,
 * and tags of no role.
 */
export const GRAMMAR: Kale.ITag[] = [
  { tag: 'imports', role: 'imports', help: '' },
  { tag: 'functions', role: 'functions', help: '' },
  { tag: 'parameters', role: 'parameters', help: '' },
  { tag: 'pipeline-parameters', role: 'parameters', help: "Kale's name" },
  { tag: 'training', role: 'training', help: '' },
  { tag: 'skip', role: 'skip', help: '' },
  { tag: 'distributed', role: 'distributed', help: '' },
  { tag: 'step:<name>', role: 'training', help: 'Kale step' },
  { tag: 'limit:<key>:<value>', role: null, help: 'a limit' },
  { tag: 'prev:<name>', role: null, help: 'ignored' }
];

/**
 * A notebook model with just what the panel uses.
 */
export class FakeModel {
  metadataChanged = new Signal<this, { key: string }>(this);
  contentChanged = new Signal<this, void>(this);
  dirty = false;
  metadata: { [key: string]: unknown } = {};
  /** Changes made in an undoable transaction (a step of the notebook's Undo). */
  undoableWrites = 0;
  sharedModel = {
    transact: (f: () => void, undoable = true) => {
      f();
      if (undoable) {
        this.undoableWrites++;
      }
    }
  };
  writes = 0;
  getMetadata(key: string): unknown {
    return copy(this.metadata[key]);
  }
  setMetadata(key: string, value: unknown): void {
    this.writes++;
    this.metadata[key] = copy(value);
    this.dirty = true;
    this.metadataChanged.emit({ key });
    this.contentChanged.emit();
  }
  deleteMetadata(key: string): void {
    this.writes++;
    delete this.metadata[key];
    this.metadataChanged.emit({ key });
  }
  toJSON() {
    return {
      cells: [],
      metadata: copy(this.metadata),
      nbformat: 4,
      nbformat_minor: 5
    };
  }
}

export class FakeCellModel {
  type = 'code';
  id = 'c1';
  metadataChanged = new Signal<this, unknown>(this);
  tags: string[] | undefined;
  getMetadata(key: string) {
    return key === 'tags' ? copy(this.tags) : undefined;
  }
  setMetadata(key: string, value: string[]) {
    this.tags = copy(value);
    this.metadataChanged.emit({});
  }
  deleteMetadata() {
    this.tags = undefined;
    this.metadataChanged.emit({});
  }
}

/**
 * A notebook panel of one code cell, at `path`, whose file is loaded when
 * `ready` resolves; `metadata` is its `kale_ext` metadata.
 */
export function fakeNotebook(
  options: { metadata?: unknown; path?: string; ready?: Promise<void> } = {}
) {
  const model = new FakeModel();
  if (options.metadata) {
    model.metadata.kale_ext = options.metadata;
  }
  const cell = { model: new FakeCellModel(), isDisposed: false };
  const notebook = {
    widgets: [cell],
    mode: 'edit',
    activeCellIndex: -1,
    deselectAll: jest.fn(),
    scrollToItem: jest.fn().mockResolvedValue(undefined)
  };
  const path = options.path ?? 'dir/nb.ipynb';
  const context = {
    ready: options.ready ?? Promise.resolve(),
    isReady: options.ready === undefined,
    localPath: path,
    path
  };
  void options.ready?.then(() => (context.isReady = true));
  const panel = {
    id: `nb-${path}`,
    model,
    content: notebook,
    context,
    disposed: new Signal({}),
    isDisposed: false
  };
  return { panel, model, notebook, cell };
}

export type FakeNotebook = ReturnType<typeof fakeNotebook>;

/**
 * A notebook tracker whose current notebook is `current`.
 */
export function fakeTracker(current: FakeNotebook | null) {
  return {
    currentWidget: current?.panel ?? null,
    activeCell: current?.cell ?? null,
    currentChanged: new Signal<unknown, unknown>({}),
    activeCellChanged: new Signal<unknown, unknown>({}),
    widgetAdded: new Signal({}),
    forEach: (fn: (p: unknown) => void) => current && fn(current.panel)
  };
}

/**
 * A fake notebook, a tracker whose current notebook it is, and the options
 * a follower of its active cell is made with (`changed` spied on).
 */
export function activeNotebook(options: { ready?: Promise<void> } = {}) {
  const nb = fakeNotebook(options);
  const tracker = fakeTracker(nb);
  const changed = jest.fn();
  const follow = {
    tracker: tracker as unknown as INotebookTracker,
    notebook: (): NotebookPanel | null => nb.panel as unknown as NotebookPanel,
    changed
  };
  return { nb, tracker, changed, follow };
}

/**
 * `GET defaults`: built in, except what `set` says (field: [value, source]).
 */
export function defaultsResponse(
  set: { [field: string]: [unknown, string] } = {}
): Kale.IDefaults {
  const values: { [field: string]: unknown } = {
    backend: 'auto',
    namespace: null,
    runtime: 'torch-distributed',
    image: null,
    pip_index_urls: [],
    nodes: null,
    cpu: null,
    memory: null,
    gpu: null
  };
  const sources: { [field: string]: string } = {};
  for (const field of Object.keys(values)) {
    sources[field] = 'built in';
  }
  for (const [field, [value, source]] of Object.entries(set)) {
    values[field] = value;
    sources[field] = source;
  }
  return { defaults: values, sources } as unknown as Kale.IDefaults;
}

/**
 * A compile that succeeded.
 */
export function compileResult(
  change: Partial<Kale.ICompileResult> = {}
): Kale.ICompileResult {
  return {
    ok: true,
    errors: [],
    warnings: [],
    function_name: 'nb',
    parameters: { epochs: 6 },
    packages: ['torch==2.13.0'],
    runtime: 'torch-distributed',
    trainjob_yaml: 'kind: TrainJob\n',
    ...change
  };
}

/**
 * A service whose every call answers as a working local server would.
 */
export function fakeService() {
  return {
    compile: jest.fn().mockResolvedValue(compileResult()),
    submit: jest
      .fn()
      .mockResolvedValue({ name: 'nb-abcde', backend: 'local', warnings: [] }),
    listJobs: jest.fn().mockResolvedValue([]),
    deleteJob: jest.fn().mockResolvedValue(undefined),
    getBackend: jest
      .fn()
      .mockResolvedValue({ name: 'local', reason: 'r', namespace: null }),
    listRuntimes: jest.fn().mockResolvedValue([]),
    listQueues: jest.fn().mockResolvedValue({
      queues: [],
      reason:
        "the local backend has no queues: Kueue's LocalQueues are on a cluster"
    }),
    getDefaults: jest.fn().mockResolvedValue(defaultsResponse()),
    listTags: jest.fn().mockResolvedValue([
      { tag: 'imports', role: 'imports', help: '' },
      { tag: 'skip', role: 'skip', help: '' },
      { tag: 'pipeline-parameters', role: 'parameters', help: '' }
    ]),
    getPanelState: jest.fn().mockImplementation(async (path: string) => ({
      path,
      state: null,
      saved: null
    })),
    savePanelState: jest
      .fn()
      .mockImplementation(async (path: string, state: unknown) => ({
        path,
        state,
        saved: '2026-01-01T00:00:00+00:00'
      }))
  };
}

export type FakeService = ReturnType<typeof fakeService>;

/**
 * A finished one-node local job as `GET jobs` lists it, with these
 * provenance annotations.
 */
export function jobInfo(
  name: string,
  provenance: Record<string, string>,
  extra: Partial<Kale.IJobInfo> = {}
): Kale.IJobInfo {
  return {
    name,
    status: 'Complete',
    backend: 'local',
    runtime: 'torch-distributed',
    num_nodes: 1,
    procs_per_node: 1,
    nodes: [],
    created: '2026-01-01T00:00:00Z',
    finished: '2026-01-01T00:01:00Z',
    provenance,
    ...extra
  };
}

/**
 * What the jobs list needs, with no jobs, no metrics and callbacks that do
 * nothing (`change` set).
 */
export function jobsListProps(change: Partial<IJobsProps> = {}): IJobsProps {
  return {
    jobs: [],
    error: '',
    deleting: new Set(),
    now: 0,
    view: DEFAULT_VIEW,
    onView: jest.fn(),
    notebook: 'a/nb.ipynb',
    metrics: () => undefined,
    onLogs: jest.fn(),
    onRerun: jest.fn(),
    onDelete: jest.fn(),
    ...change
  };
}
