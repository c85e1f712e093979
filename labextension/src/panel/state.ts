import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { VDomModel } from '@jupyterlab/ui-components';

import type { KaleService } from '../api';
import type { IFieldError } from '../form/errors';
import { IFormContext, IJobForm, jobRequest } from '../form/model';
import type { ISweepForm } from '../form/sweep';
import { ResultLoader } from '../results/loader';
import type { Kale } from '../types';
import { CellRoles } from './notebook/cell-roles';
import {
  ActiveCellWatcher,
  IActiveCell,
  showDiagnosticCell,
  showFailureCell
} from './notebook/cells';
import { CompileCycle } from './preview/compile-cycle';
import { JobActions } from './jobs/job-actions';
import { SubmitGate } from './jobs/submit-gate';
import { RowActions } from './jobs/row-actions';
import { JobNameReservation } from './jobs/job-name';
import { JobsModel } from './jobs/jobs-model';
import { NotebookBinding } from './notebook/notebook-binding';
import { notebookSource } from './notebook/notebook-io';
import { FormState } from './form/form-state';
import { ServerFacts } from './form/server-facts';
import type { PanelMemory } from './notebook/memory';

/**
 * The panel's state and actions: the server's facts, the active notebook's
 * form and compile result, the jobs list. Views render it and call its
 * methods; it talks to the server only through {@link KaleService}.
 *
 * The parts live beside it: {@link ServerFacts} (what the server offers),
 * {@link CompileCycle} (the notebook checked as it changes), {@link
 * FormState} (the form, kept in the notebook's metadata and on the
 * server, and restored), {@link NotebookBinding},
 * {@link ActiveCellWatcher}, `job-actions` (submit and delete, and what
 * they tell the user).
 */
export class PanelState extends VDomModel {
  constructor(options: PanelState.IOptions) {
    super();
    this.service = options.service;
    this._options = options;
    const emit = () => this.stateChanged.emit();
    const changed = () => {
      const result = this._compiler.result;
      if (result && !this._compiler.running && !this.form.name.trim()) {
        if (this._name.observe(result)) {
          this._compiler.now(); // the kept name was refused: a new one
        }
      }
      this._forms.validate();
      this.stateChanged.emit();
    };
    this.server = new ServerFacts(options.service);
    this._forms = new FormState({
      service: options.service,
      notebook: () => this.notebook,
      ready: () => this._binding.ready,
      server: this.server,
      compile: () => this.compile,
      jobName: () => this._name.name,
      jobs: () => this.jobList?.jobs ?? null,
      changed: emit,
      edited: () => this.actions.clearNotice(),
      validated: () => {
        // the name the job just submitted took is no reason to forget that
        // it was submitted (the field says it is taken)
        const job = this.actions.notice?.job;
        const errors = this.fieldErrors.filter(
          e => !(job && e.field === 'name' && this.form.name.trim() === job)
        );
        this.actions.formChecked(
          errors.length === 0 && this.compile?.ok !== false
        );
      },
      recheck: () => this._scheduleCompile()
    });
    this._compiler = new CompileCycle({
      service: options.service,
      request: () => this._request(false),
      changed,
      delay: options.compileDelay
    });
    this._cells = new ActiveCellWatcher({
      tracker: options.tracker,
      notebook: () => this.notebook,
      changed: emit
    });
    this.roles = new CellRoles({
      tracker: options.tracker,
      notebook: () => this.notebook,
      grammar: () => this.server.tags,
      changed: emit
    });
    this.jobList = new JobsModel({
      service: options.service,
      pollInterval: options.pollInterval,
      store: options.jobsViewStore
    });
    this.jobList.changed.connect(() => {
      this._forms.jobsListed(); // a name typed may be taken now
      this.stateChanged.emit();
    });
    this.actions = new JobActions({
      service: options.service,
      jobs: this.jobList,
      openLogs: options.openLogs,
      openSweep: options.openSweep,
      confirm: options.confirm,
      changed: emit
    });
    this.rows = new RowActions({
      service: options.service,
      jobs: this.jobList,
      openLogs: options.openLogs,
      changed: emit
    });
    this._gate = new SubmitGate({
      actions: this.actions,
      compiler: this._compiler,
      notebook: () => this.notebook,
      fieldErrors: () => this.fieldErrors,
      sweep: () => this.sweep,
      request: () => this._request(true),
      submitted: () => {
        this._name.release(); // taken: the next one gets a new one
        this._compiler.now();
      },
      changed: emit
    });
    this.loader = new ResultLoader({
      tracker: options.tracker,
      saved: name => this.jobList.results.get(name),
      openNotebook: options.openNotebook,
      activate: options.activate,
      say: (name, kind, text) => this.rows.say(name, kind, text)
    });
    this._binding = new NotebookBinding({
      tracker: options.tracker,
      bound: () => this._bound(),
      ready: panel => {
        this._cells.refresh();
        this._forms.readMetadata();
        this._compiler.now();
        void this._forms.recall(panel);
      },
      unbound: () => this._compiler.cancel(),
      metadataChanged: () => this._forms.readMetadata(),
      contentChanged: () => this._scheduleCompile()
    });
    this._binding.bind(options.tracker.currentWidget);
  }

  readonly service: KaleService;

  /** What the server offers: backend, runtimes, defaults, tag grammar. */
  readonly server: ServerFacts;

  /** The active cell's role, as the tag editor sets it. */
  readonly roles: CellRoles;

  /** The form kept on the server, so a reload restores it (and says so). */
  get memory(): PanelMemory {
    return this._forms.memory;
  }

  get form(): IJobForm {
    return this._forms.form;
  }
  get fieldErrors(): IFieldError[] {
    return this._forms.fieldErrors;
  }
  /** The swept parameters and how to search (Submit starts a sweep). */
  get sweep(): ISweepForm {
    return this._forms.sweep;
  }

  /** The last compile's answer. */
  get compile(): Kale.ICompileResult | null {
    return this._compiler.result;
  }
  get compiling(): boolean {
    return this._compiler.running;
  }
  get compileError(): string {
    return this._compiler.error;
  }

  /** The notebook as the last compile that compiled knew it. */
  get compiled(): CompileCycle.IKnown | null {
    return this._compiler.known;
  }

  /** The jobs list. */
  readonly jobList: JobsModel;

  /** Submit, delete, and what they said. */
  readonly actions: JobActions;

  /** A job row's Rerun, Stop and Edit and rerun, and what each row said. */
  readonly rows: RowActions;

  /** An ended job's "Load into the notebook". */
  readonly loader: ResultLoader;

  /** The job submitted last from this notebook (this session). */
  get currentJob(): JobActions.ICurrent | null {
    return this.actions.current(this.notebook?.context.path);
  }

  get activeCell(): IActiveCell | null {
    return this._cells.current;
  }

  /** The notebook the panel is bound to (the tracker's current one). */
  get notebook(): NotebookPanel | null {
    return this._binding.panel;
  }

  /** The runtime the job will use: chosen, else what compile resolved. */
  get runtime(): Kale.IRuntime | undefined {
    return this._forms.runtime;
  }

  /** What serializing and validating the form need from the server. */
  get context(): IFormContext {
    return this._forms.context;
  }

  /** Why Submit is disabled, or '' when it is not (see {@link SubmitGate}). */
  get submitBlocker(): string {
    return this._gate.blocker;
  }
  /** Whether a Submit is on its way (or waits for the check it asked for). */
  get submitting(): boolean {
    return this._gate.submitting;
  }
  /** Beside an enabled Submit: the check a click would wait for, or ''. */
  get submitNote(): string {
    return this._gate.note;
  }

  /** Load what the server offers (backend, runtimes, defaults, tags). */
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

  /** Whether the panel can open the defaults' editor. */
  get canEditDefaults(): boolean {
    return (
      this._options.editDefaults !== undefined &&
      (this._options.canEditDefaults?.() ?? true)
    );
  }

  /** Open the defaults' editor (JupyterLab's Settings Editor). */
  editDefaults(): void {
    this._options.editDefaults?.();
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
    this._forms.update(change);
  }

  /** Change the sweep: a parameter swept or not, its values, the settings. */
  updateSweep(change: Partial<ISweepForm>): void {
    this._forms.updateSweep(change);
  }

  /** Go back to the notebook's own values from those restored at load. */
  useNotebookValues(): void {
    this._forms.useNotebook();
  }

  /** Open the compare view of two or more jobs. */
  compare(names: string[]): void {
    this._options.compare?.(names);
  }

  openSweep(name: string): void {
    this._options.openSweep?.(name);
  }

  /** Select and show the cell a diagnostic is about. */
  async selectCell(diagnostic: Kale.IDiagnostic): Promise<void> {
    if (this.notebook) {
      await showDiagnosticCell(
        this.notebook,
        diagnostic,
        this._options.activate ?? (() => undefined)
      );
    }
  }

  /** Submit the notebook with the form's choices (see {@link SubmitGate}). */
  submit(): Promise<void> {
    return this._gate.submit();
  }

  openLogs(name: string): void {
    this._options.openLogs(name);
  }

  /** Show the compiled function `name` of the notebook, read-only. */
  viewSource(name: string, source: string): void {
    const path = this.notebook?.context.path ?? '';
    this._options.viewSource?.(name, source, path);
  }

  /**
   * Load a job's recorded options into the form (of its own notebook), to
   * change them before submitting; its row says what happened.
   */
  editAndRerun(job: Kale.IJobInfo): void {
    const form = this.rows.recordedForm(job, this.notebook?.context.path);
    if (form) {
      this._name.release(); // a new job: a new name
      this.updateForm(form);
    }
  }

  /** Open the notebook a job failed in, at the cell (and line) it failed. */
  async openFailure(job: Kale.IJobInfo): Promise<void> {
    const { openNotebook, activate } = this._options;
    if (openNotebook) {
      await showFailureCell(job, openNotebook, activate ?? (() => undefined));
    }
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._binding.dispose();
    this._compiler.dispose();
    this._cells.dispose();
    this.jobList.dispose();
    super.dispose();
  }

  private async _loadServer(withTags: boolean): Promise<void> {
    await this.server.load(withTags);
    this._forms.validate();
    this.stateChanged.emit();
  }

  /** Bound to another notebook (or none): its form is read once its file is. */
  private _bound(): void {
    this._forms.reset();
    this.roles.forget();
    this.actions.clearNotice();
    this._name.release();
    this._compiler.reset();
    this._cells.refresh();
    this._forms.validate();
    this.stateChanged.emit();
  }

  private _scheduleCompile(): void {
    if (this.notebook) {
      this._compiler.schedule();
    }
  }

  /** The request for the bound notebook and the form's choices. */
  private _request(preferPath: boolean): Kale.JobRequest | null {
    const source = notebookSource(this.notebook, preferPath);
    return source && this._name.apply(jobRequest(source, this.form));
  }

  private _name = new JobNameReservation();
  private _gate: SubmitGate;
  private _forms: FormState;
  private _options: PanelState.IOptions;
  private _compiler: CompileCycle;
  private _cells: ActiveCellWatcher;
  private _binding: NotebookBinding;
}

export namespace PanelState {
  export interface IOptions {
    service: KaleService;
    tracker: INotebookTracker;
    /**
     * Open the logs view of a job; `notebook`: opened by a submit from that
     * notebook (its tab takes the place of the last one that notebook's
     * submit opened, unless pinned, and the notebook keeps the focus).
     */
    openLogs: (name: string, notebook?: string) => void;
    /** Open the view of a sweep. */
    openSweep?: (name: string) => void;
    /** Show a notebook's compiled function (its name, source and path). */
    viewSource?: (name: string, source: string, notebook: string) => void;
    /** Open the side-by-side view of two or more jobs. */
    compare?: (names: string[]) => void;
    /** Open the editor of the user's defaults (JupyterLab's settings). */
    editDefaults?: () => void;
    /** Whether that editor exists now (JupyterLab may run without it). */
    canEditDefaults?: () => boolean;
    /** Bring a notebook to the front (when a diagnostic's cell is shown). */
    activate?: (panel: NotebookPanel) => void;
    /** Ask before deleting a job. */
    confirm?: (name: string) => Promise<boolean>;
    /** Open a notebook by its path below the server root. */
    openNotebook?: (path: string) => Promise<NotebookPanel | null>;
    /** Where the jobs list's arrangement is kept. */
    jobsViewStore?: JobsModel.IViewStore;
    compileDelay?: number;
    pollInterval?: number;
  }
}
