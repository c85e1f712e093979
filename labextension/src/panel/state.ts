import type { Cell } from '@jupyterlab/cells';
import type { INotebookContent } from '@jupyterlab/nbformat';
import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { VDomModel } from '@jupyterlab/ui-components';
import { Debouncer } from '@lumino/polling';

import { KaleAPIError, KaleService } from '../api';
import {
  IFormContext,
  IJobForm,
  emptyForm,
  fromMetadata,
  jobRequest,
  sameForm,
  toMetadata
} from '../model';
import { cellTags, roleTags, toggleTag } from '../tags/tags';
import type { Kale } from '../types';
import { IFieldError, validateForm } from '../validation';
import { JobsModel } from './jobs-model';
import { undoableMetadataChange } from './undo';

/**
 * The notebook metadata key the panel owns.
 */
export const METADATA_KEY = 'kale_ext';

/**
 * A message under the Submit button.
 */
export interface INotice {
  kind: 'info' | 'error';
  text: string;
  details?: string[];
  diagnostics?: Kale.IDiagnostic[];
}

/**
 * The active cell, as the tag editor shows it.
 */
export interface IActiveCell {
  index: number;
  type: string;
  tags: string[];
}

/**
 * The panel's state and actions: the server's facts, the active notebook's
 * form and compile result, the jobs list. Views render it and call its
 * methods; it talks to the server only through {@link KaleService}.
 */
export class PanelState extends VDomModel {
  constructor(options: PanelState.IOptions) {
    super();
    this.service = options.service;
    this._tracker = options.tracker;
    this._openLogs = options.openLogs;
    this._editDefaults = options.editDefaults;
    this._canEditDefaults = options.canEditDefaults;
    this._activate = options.activate ?? (() => undefined);
    this._confirm = options.confirm ?? (() => Promise.resolve(true));
    this._compiler = new Debouncer(
      () => this._compile(),
      options.compileDelay ?? 400
    );
    this.jobList = new JobsModel({
      service: options.service,
      pollInterval: options.pollInterval
    });
    this.jobList.changed.connect(() => this.stateChanged.emit());
    this._tracker.currentChanged.connect(this._onCurrentChanged, this);
    this._tracker.activeCellChanged.connect(this._onActiveCellChanged, this);
    this._bind(this._tracker.currentWidget);
  }

  readonly service: KaleService;

  backend: Kale.IBackend | null = null;
  runtimes: Kale.IRuntime[] = [];
  /** The tag grammar (`GET tags`). */
  tags: Kale.ITag[] = [];
  /** The defaults jobs start from (`GET defaults`), and who set each. */
  defaults: Kale.IDefaults | null = null;
  /**
   * Why the defaults could not be loaded: an invalid setting (the server's
   * message names it and the layer that set it), or the server's error.
   */
  defaultsError = '';
  /** Why the backend, runtimes, defaults or tags could not be loaded. */
  loadError = '';

  form: IJobForm = emptyForm();
  fieldErrors: IFieldError[] = [];
  compile: Kale.ICompileResult | null = null;
  compiling = false;
  compileError = '';

  submitting = false;
  notice: INotice | null = null;

  /** The jobs list. */
  readonly jobList: JobsModel;

  activeCell: IActiveCell | null = null;

  /**
   * The notebook the panel is bound to (the tracker's current one).
   */
  get notebook(): NotebookPanel | null {
    return this._notebook;
  }

  /**
   * The runtime the job will use: chosen, else what compile resolved.
   */
  get runtime(): Kale.IRuntime | undefined {
    const name = this.form.runtime || this.compile?.runtime;
    if (!name && this.runtimes.length === 1) {
      return this.runtimes[0]; // the backend's only runtime is the default
    }
    return this.runtimes.find(r => r.name === name);
  }

  /**
   * What serializing and validating the form need from the server.
   */
  get context(): IFormContext {
    return { parameters: this.compile?.parameters, runtime: this.runtime };
  }

  /**
   * Why Submit is disabled, or '' when it is not.
   */
  get submitBlocker(): string {
    if (!this._notebook) {
      return 'Open a notebook first';
    }
    if (this.submitting) {
      return 'Submitting…';
    }
    if (this.fieldErrors.length > 0) {
      return 'Fix the highlighted fields first';
    }
    if (this.compiling || !this.compile) {
      return 'Checking the notebook…';
    }
    if (!this.compile.ok) {
      return 'Fix the errors listed above first';
    }
    return '';
  }

  /**
   * Load what the server offers (backend, runtimes, defaults, tags).
   */
  async load(): Promise<void> {
    await this._loadServer(true);
  }

  /**
   * The user's kale_ext settings changed (JupyterLab has saved them, and the
   * server reads them again): load the backend, its runtimes and the
   * defaults again, and check the notebook again so the preview follows.
   */
  async settingsChanged(): Promise<void> {
    await this._loadServer(false);
    this._scheduleCompile();
  }

  /**
   * Whether the panel can open the defaults' editor.
   */
  get canEditDefaults(): boolean {
    return (
      this._editDefaults !== undefined && (this._canEditDefaults?.() ?? true)
    );
  }

  /**
   * Open the defaults' editor (JupyterLab's Settings Editor).
   */
  editDefaults(): void {
    this._editDefaults?.();
  }

  /**
   * The panel was shown or hidden: poll the jobs only while it is visible.
   */
  setVisible(visible: boolean): void {
    this.jobList.setVisible(visible);
  }

  /**
   * Change the form; the notebook's metadata follows (through its model, so
   * the change is part of the document and can be undone), and the notebook
   * is checked again.
   */
  updateForm(change: Partial<IJobForm>): void {
    this.form = { ...this.form, ...change };
    this._validate();
    this._writeMetadata();
    this.stateChanged.emit();
    this._scheduleCompile();
  }

  /**
   * Press one of the offered tags on the active cell.
   */
  toggleTag(tag: string): void {
    const cell = this._tracker.activeCell;
    if (!cell) {
      return;
    }
    const offered = roleTags(this.tags).map(t => t.tag);
    const next = toggleTag(
      cellTags(cell.model.getMetadata('tags')),
      tag,
      offered
    );
    if (next.length > 0) {
      cell.model.setMetadata('tags', next);
    } else {
      cell.model.deleteMetadata('tags');
    }
  }

  /**
   * Select and show the cell a diagnostic is about.
   */
  async selectCell(diagnostic: Kale.IDiagnostic): Promise<void> {
    const panel = this._notebook;
    if (!panel) {
      return;
    }
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
    this._activate(panel);
    notebook.mode = 'command';
    notebook.deselectAll();
    notebook.activeCellIndex = index;
    await notebook.scrollToItem(index, 'center');
  }

  /**
   * Submit the notebook with the form's choices.
   */
  async submit(): Promise<void> {
    if (this.submitBlocker) {
      return;
    }
    const source = this._source(true);
    if (!source) {
      return;
    }
    await this._submit(jobRequest(source, this.form, this.context));
  }

  /**
   * Whether a job can be run again with the same options.
   */
  canRerun(job: Kale.IJobInfo): boolean {
    return this.jobList.rerunRequest(job) !== null;
  }

  /**
   * Run a job again: the same notebook and options, a new name.
   */
  async rerun(job: Kale.IJobInfo): Promise<void> {
    const body = this.jobList.rerunRequest(job);
    if (body && !this.submitting) {
      await this._submit(body);
    }
  }

  /**
   * Delete a job, after asking.
   */
  async deleteJob(name: string): Promise<void> {
    if (!(await this._confirm(name))) {
      return;
    }
    try {
      await this.jobList.delete(name);
      this.notice = { kind: 'info', text: `Deleted ${name}` };
    } catch (reason) {
      this.notice = { kind: 'error', text: Private.message(reason) };
    }
    this.stateChanged.emit();
  }

  openLogs(name: string): void {
    this._openLogs(name);
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._unbind();
    this._compiler.dispose();
    this.jobList.dispose();
    this._abort?.abort();
    super.dispose();
  }

  /**
   * Fetch the server's facts; the tags (which settings do not change) only
   * when `withTags`. When loads overlap, the last one started wins.
   */
  private async _loadServer(withTags: boolean): Promise<void> {
    const generation = ++this._loads;
    const errors: string[] = [];
    const get = <T>(promise: Promise<T>): Promise<T | undefined> =>
      promise.catch(reason => {
        errors.push(Private.message(reason));
        return undefined;
      });
    let defaultsError = '';
    const [backend, runtimes, defaults, tags] = await Promise.all([
      get(this.service.getBackend()),
      get(this.service.listRuntimes()),
      get(
        this.service.getDefaults().catch(reason => {
          defaultsError = Private.message(reason);
          throw reason;
        })
      ),
      withTags ? get(this.service.listTags()) : undefined
    ]);
    this.tags = tags ?? this.tags;
    if (generation === this._loads) {
      this.backend = backend ?? this.backend;
      this.runtimes = runtimes ?? this.runtimes;
      this.defaults = defaults ?? this.defaults;
      this.defaultsError = defaultsError;
      this.loadError = errors[0] ?? '';
    }
    this._validate();
    this.stateChanged.emit();
  }

  private async _submit(body: Kale.JobRequest): Promise<void> {
    this.submitting = true;
    this.notice = null;
    this.stateChanged.emit();
    try {
      const result = await this.service.submit(body);
      this.jobList.remember(result.name, body);
      this.notice = {
        kind: 'info',
        text: `Submitted ${result.name} (${result.backend})`,
        details: result.warnings
      };
      this.jobList.refresh();
    } catch (reason) {
      this.notice = {
        kind: 'error',
        text: Private.message(reason),
        diagnostics: reason instanceof KaleAPIError ? reason.errors : []
      };
    } finally {
      this.submitting = false;
      this.stateChanged.emit();
    }
  }

  private _onCurrentChanged(
    _: INotebookTracker,
    panel: NotebookPanel | null
  ): void {
    this._bind(panel);
  }

  private _bind(panel: NotebookPanel | null): void {
    if (panel !== null && panel === this._notebook) {
      return;
    }
    this._unbind();
    this._notebook = panel;
    this._ready = false;
    this.form = emptyForm();
    this.compile = null;
    this.compiling = false;
    this.compileError = '';
    this.notice = null;
    if (panel) {
      panel.disposed.connect(this._onNotebookDisposed, this);
      void panel.context.ready.then(() => {
        if (this._notebook !== panel || !panel.model) {
          return;
        }
        this._ready = true;
        panel.model.metadataChanged.connect(this._onMetadataChanged, this);
        panel.model.contentChanged.connect(this._scheduleCompile, this);
        this._readMetadata();
        this._compileNow();
      });
    }
    this._onActiveCellChanged();
    this._validate();
    this.stateChanged.emit();
  }

  private _unbind(): void {
    const panel = this._notebook;
    if (!panel) {
      return;
    }
    panel.disposed.disconnect(this._onNotebookDisposed, this);
    panel.model?.metadataChanged.disconnect(this._onMetadataChanged, this);
    panel.model?.contentChanged.disconnect(this._scheduleCompile, this);
    this._abort?.abort();
    this._notebook = null;
  }

  private _onNotebookDisposed(): void {
    this._unbind();
    const current = this._tracker.currentWidget;
    this._bind(current && !current.isDisposed ? current : null);
  }

  private _onMetadataChanged(_: unknown, change: { key: string }): void {
    if (change.key === METADATA_KEY) {
      this._readMetadata();
    }
  }

  /**
   * Take the form from the notebook's metadata, unless it already says the
   * same (then the user's text, half-typed values included, stays).
   */
  private _readMetadata(): void {
    const model = this._notebook?.model;
    if (!model) {
      return;
    }
    const form = fromMetadata(model.getMetadata(METADATA_KEY));
    if (!sameForm(form, this.form)) {
      this.form = form;
      this._validate();
      this.stateChanged.emit();
      this._scheduleCompile();
    }
  }

  private _writeMetadata(): void {
    const model = this._notebook?.model;
    if (!model || !this._ready) {
      return; // not loaded yet: the file's metadata is read once it is
    }
    const meta = toMetadata(this.form, this.context);
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

  private _onActiveCellChanged(): void {
    const cell = this._tracker.activeCell;
    if (cell !== this._cell) {
      this._cell?.model.metadataChanged.disconnect(
        this._updateActiveCell,
        this
      );
      this._cell = cell;
      cell?.model.metadataChanged.connect(this._updateActiveCell, this);
    }
    this._updateActiveCell();
  }

  private _updateActiveCell(): void {
    const cell = this._cell;
    const notebook = this._notebook?.content;
    if (!cell || !notebook || cell.isDisposed) {
      this.activeCell = null;
    } else {
      this.activeCell = {
        index: notebook.widgets.indexOf(cell),
        type: cell.model.type,
        tags: cellTags(cell.model.getMetadata('tags'))
      };
    }
    this.stateChanged.emit();
  }

  private _scheduleCompile(): void {
    if (this._notebook) {
      void this._compiler.invoke();
    }
  }

  private _compileNow(): void {
    this._compiler.stop();
    void this._compile();
  }

  private async _compile(): Promise<void> {
    const source = this._source(false);
    if (!source) {
      return;
    }
    this._abort?.abort();
    const abort = (this._abort = new AbortController());
    this.compiling = true;
    this.stateChanged.emit();
    try {
      const result = await this.service.compile(
        jobRequest(source, this.form, this.context),
        abort.signal
      );
      if (abort.signal.aborted) {
        return;
      }
      this.compile = result;
      this.compileError = '';
    } catch (reason) {
      if (abort.signal.aborted) {
        return;
      }
      this.compile = null;
      this.compileError = Private.message(reason);
    }
    this.compiling = false;
    this._validate();
    this.stateChanged.emit();
  }

  /**
   * The notebook to send. Compile always sends the model's JSON, so unsaved
   * changes count; submit sends the path when the file is saved (the job
   * then records where it came from).
   */
  private _source(preferPath: boolean): Kale.NotebookSource | null {
    const panel = this._notebook;
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

  private _validate(): void {
    this.fieldErrors = validateForm(this.form, this.context);
  }

  private _tracker: INotebookTracker;
  private _openLogs: (name: string) => void;
  private _editDefaults: (() => void) | undefined;
  private _canEditDefaults: (() => boolean) | undefined;
  private _loads = 0;
  private _activate: (panel: NotebookPanel) => void;
  private _confirm: (name: string) => Promise<boolean>;
  private _compiler: Debouncer;
  private _abort: AbortController | null = null;
  private _notebook: NotebookPanel | null = null;
  private _cell: Cell | null = null;
  private _ready = false;
}

export namespace PanelState {
  export interface IOptions {
    service: KaleService;
    tracker: INotebookTracker;
    /** Open the logs view of a job. */
    openLogs: (name: string) => void;
    /** Open the editor of the user's defaults (JupyterLab's settings). */
    editDefaults?: () => void;
    /** Whether that editor exists now (JupyterLab may run without it). */
    canEditDefaults?: () => boolean;
    /** Bring a notebook to the front (when a diagnostic's cell is shown). */
    activate?: (panel: NotebookPanel) => void;
    /** Ask before deleting a job. */
    confirm?: (name: string) => Promise<boolean>;
    compileDelay?: number;
    pollInterval?: number;
  }
}

namespace Private {
  export function message(reason: unknown): string {
    return reason instanceof Error ? reason.message : String(reason);
  }
}
