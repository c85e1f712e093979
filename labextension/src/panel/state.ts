import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { VDomModel } from '@jupyterlab/ui-components';

import type { KaleService } from '../api';
import { formErrors } from '../form/fields';
import { sameForm } from '../form/metadata';
import { IFormContext, IJobForm, emptyForm, jobRequest } from '../form/model';
import {
  ISweepForm,
  emptySweep,
  isSweeping,
  sameSweep,
  sweepRequest,
  validateSweep
} from '../form/sweep';
import type { IFieldError } from '../form/errors';
import type { IPanelValues } from '../form/restore';
import { validateForm } from '../form/validation';
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
import { RowActions } from './jobs/row-actions';
import { JobNameReservation } from './jobs/job-name';
import { JobsModel } from './jobs/jobs-model';
import { NotebookBinding } from './notebook/notebook-binding';
import {
  notebookSource,
  readForm,
  readSweep,
  writeForm
} from './notebook/notebook-io';
import { ServerFacts } from './form/server-facts';
import { PanelMemory } from './notebook/memory';

/**
 * The panel's state and actions: the server's facts, the active notebook's
 * form and compile result, the jobs list. Views render it and call its
 * methods; it talks to the server only through {@link KaleService}.
 *
 * The parts live beside it: {@link ServerFacts} (what the server offers),
 * {@link CompileCycle} (the notebook checked as it changes), `notebook-io`
 * (the form kept in the notebook's metadata), {@link NotebookBinding},
 * {@link ActiveCellWatcher}, `job-actions` (submit and delete, and what
 * they tell the user).
 */
export class PanelState extends VDomModel {
  constructor(options: PanelState.IOptions) {
    super();
    this.service = options.service;
    this._options = options;
    const changed = () => {
      const result = this._compiler.result;
      if (result && !this._compiler.running && !this.form.name.trim()) {
        if (this._name.observe(result)) {
          this._compiler.now(); // the kept name was refused: a new one
        }
      }
      this._validate();
      this.stateChanged.emit();
    };
    this.server = new ServerFacts(options.service);
    this.memory = new PanelMemory(options.service, () =>
      this.stateChanged.emit()
    );
    this._compiler = new CompileCycle({
      service: options.service,
      request: () => this._request(false),
      changed,
      delay: options.compileDelay
    });
    this._cells = new ActiveCellWatcher({
      tracker: options.tracker,
      notebook: () => this.notebook,
      changed: () => this.stateChanged.emit()
    });
    this.roles = new CellRoles({
      tracker: options.tracker,
      notebook: () => this.notebook,
      grammar: () => this.server.tags,
      changed: () => this.stateChanged.emit()
    });
    this.jobList = new JobsModel({
      service: options.service,
      pollInterval: options.pollInterval,
      store: options.jobsViewStore
    });
    this.jobList.changed.connect(() => this.stateChanged.emit());
    this.actions = new JobActions({
      service: options.service,
      jobs: this.jobList,
      openLogs: options.openLogs,
      openSweep: options.openSweep,
      confirm: options.confirm,
      changed: () => this.stateChanged.emit()
    });
    this.rows = new RowActions({
      service: options.service,
      jobs: this.jobList,
      openLogs: options.openLogs,
      changed: () => this.stateChanged.emit()
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
        this._readMetadata();
        this._compiler.now();
        void this._recall(panel);
      },
      unbound: () => this._compiler.cancel(),
      metadataChanged: () => this._readMetadata(),
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
  readonly memory: PanelMemory;

  form: IJobForm = emptyForm();
  fieldErrors: IFieldError[] = [];
  /** The swept parameters and how to search (Submit starts a sweep). */
  sweep: ISweepForm = emptySweep();

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

  /**
   * The notebook the panel is bound to (the tracker's current one).
   */
  get notebook(): NotebookPanel | null {
    return this._binding.panel;
  }

  /**
   * The runtime the job will use: chosen, else what compile resolved.
   */
  get runtime(): Kale.IRuntime | undefined {
    const name = this.form.runtime || this.compile?.runtime;
    if (!name && this.server.runtimes.length === 1) {
      return this.server.runtimes[0]; // the backend's only runtime is the default
    }
    return this.server.runtimes.find(r => r.name === name);
  }

  /**
   * What serializing and validating the form need from the server.
   */
  get context(): IFormContext {
    return {
      parameters: this.compile?.parameters,
      runtime: this.runtime,
      local: this.server.backend?.name === 'local'
    };
  }

  /**
   * Why Submit is disabled, or '' when it is not. A check of a notebook
   * that compiled leaves it enabled: such a check also starts by itself
   * (the kernel writes the notebook's language_info when it connects), and
   * a click landing as Submit turned disabled for it was lost without a
   * word; a click during a check waits for it ({@link submit}).
   */
  get submitBlocker(): string {
    if (!this.notebook) {
      return 'Open a notebook first';
    }
    if (this.submitting) {
      return 'Submitting…';
    }
    if (this.fieldErrors.length > 0) {
      return 'Fix the highlighted fields first';
    }
    if (!this.compile || (this._compiler.pending && !this.compile.ok)) {
      return 'Checking the notebook…';
    }
    if (!this.compile.ok) {
      return 'Fix the errors listed above first';
    }
    return '';
  }

  /** Whether a Submit is on its way (or waits for the check it asked for). */
  get submitting(): boolean {
    return this.actions.submitting || this._submitWaits;
  }

  /** Beside an enabled Submit: the check a click would wait for, or ''. */
  get submitNote(): string {
    return !this.submitBlocker && this._compiler.pending
      ? 'Checking the notebook…'
      : '';
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
      this._options.editDefaults !== undefined &&
      (this._options.canEditDefaults?.() ?? true)
    );
  }

  /**
   * Open the defaults' editor (JupyterLab's Settings Editor).
   */
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
    this.form = { ...this.form, ...change };
    this.actions.clearNotice();
    this._validate();
    const model = this.notebook?.model;
    if (model && this._binding.ready) {
      // (not loaded yet: the file's metadata is read once it is)
      writeForm(model, this.form, this.sweep);
    }
    this._remember();
    this.stateChanged.emit();
    this._scheduleCompile();
  }

  /**
   * Change the sweep: a parameter swept or not, its values, the settings.
   */
  updateSweep(change: Partial<ISweepForm>): void {
    this.sweep = { ...this.sweep, ...change };
    this.actions.clearNotice();
    this._validate();
    const model = this.notebook?.model;
    if (model && this._binding.ready) {
      writeForm(model, this.form, this.sweep); // remembered with the form
    }
    this._remember();
    this.stateChanged.emit();
  }

  /**
   * Go back to the notebook's own values from those restored at load.
   */
  useNotebookValues(): void {
    const values = this.memory.useNotebook();
    if (values) {
      this._apply(values);
    }
  }

  /**
   * Open the compare view of two or more jobs.
   */
  compare(names: string[]): void {
    this._options.compare?.(names);
  }

  openSweep(name: string): void {
    this._options.openSweep?.(name);
  }

  /**
   * Select and show the cell a diagnostic is about.
   */
  async selectCell(diagnostic: Kale.IDiagnostic): Promise<void> {
    if (this.notebook) {
      await showDiagnosticCell(
        this.notebook,
        diagnostic,
        this._options.activate ?? (() => undefined)
      );
    }
  }

  /**
   * Submit the notebook with the form's choices.
   */
  async submit(): Promise<void> {
    if (this._compiler.pending) {
      // A change still being checked: submit what the check says, once in.
      this._submitWaits = true;
      this.stateChanged.emit();
      await this._compiler.settled();
      this._submitWaits = false;
    }
    const blocker = this.submitBlocker;
    if (blocker) {
      this.actions.refuse(blocker); // the check found a problem: say so
      return;
    }
    const body = this._request(true);
    if (!body) {
      return;
    }
    if (isSweeping(this.sweep)) {
      // the name shown is the sweep's; every parameter set applies to its trials
      if (await this.actions.submitSweep(sweepRequest(body, this.sweep))) {
        this._name.release(); // taken: the next one gets a new one
        this._compiler.now();
      }
      return;
    }
    if (await this.actions.submit(body, this.notebook?.context.path)) {
      this._name.release(); // taken: the next job gets a new one
      this._compiler.now();
    }
  }

  openLogs(name: string): void {
    this._options.openLogs(name);
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

  /**
   * Open the notebook a job failed in, at the cell (and line) it failed.
   */
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
    this._validate();
    this.stateChanged.emit();
  }

  /**
   * Bound to another notebook (or none): its form is read once its file is.
   */
  private _bound(): void {
    this.form = emptyForm();
    this.sweep = emptySweep();
    this.roles.forget();
    this.actions.clearNotice();
    this._name.release();
    this.memory.reset();
    this._compiler.reset();
    this._cells.refresh();
    this._validate();
    this.stateChanged.emit();
  }

  /**
   * Take the form from the notebook's metadata, unless it already says the
   * same (then the user's text, half-typed values included, stays).
   */
  private _readMetadata(): void {
    const model = this.notebook?.model;
    if (!model) {
      return;
    }
    const form = readForm(model);
    const sweep = readSweep(model);
    const sweepChanged = !sameSweep(sweep, this.sweep);
    if (sweepChanged) {
      this.sweep = sweep;
    }
    if (!sameForm(form, this.form)) {
      this.form = form;
      this._validate();
      this._remember();
      this.stateChanged.emit();
      this._scheduleCompile();
    } else if (sweepChanged) {
      this._validate();
      this._remember();
      this.stateChanged.emit();
    }
  }

  /**
   * The notebook is loaded: the values kept from the last session, when
   * they differ from the notebook's, are the form's (the note says so).
   */
  private async _recall(panel: NotebookPanel): Promise<void> {
    const kept = await this.memory.recall(panel.context.localPath, {
      form: this.form,
      sweep: this.sweep
    });
    if (kept && this.notebook === panel) {
      this._apply(kept);
    }
  }

  /** The form and sweep are `values` (the notebook's metadata follows). */
  private _apply(values: IPanelValues): void {
    this.form = values.form;
    this.sweep = values.sweep;
    const model = this.notebook?.model;
    if (model && this._binding.ready) {
      writeForm(model, this.form, this.sweep);
    }
    this._remember();
    this._validate();
    this.stateChanged.emit();
    this._scheduleCompile();
  }

  private _remember(): void {
    this.memory.remember(
      { form: this.form, sweep: this.sweep },
      this.notebook?.context.localPath
    );
  }

  private _scheduleCompile(): void {
    if (this.notebook) {
      this._compiler.schedule();
    }
  }

  /**
   * The request for the bound notebook and the form's choices.
   */
  private _request(preferPath: boolean): Kale.JobRequest | null {
    const source = notebookSource(this.notebook, preferPath);
    return source && this._name.apply(jobRequest(source, this.form));
  }

  /**
   * The fields' problems: the panel's checks as you type, and the last
   * compile's errors about a field (a parameter's type, ...).
   */
  private _validate(): void {
    this.fieldErrors = formErrors(
      [
        ...validateForm(this.form, this.context),
        ...validateSweep(
          this.sweep,
          this.compile?.parameters,
          this.form.name.trim() || this._name.name
        )
      ],
      this.compile,
      this.form
    );
    // A "Submitted …" notice is about an older form: gone once this one
    // cannot be submitted.
    if (
      this.actions.notice?.kind === 'info' &&
      (this.fieldErrors.length > 0 || this.compile?.ok === false)
    ) {
      this.actions.clearNotice();
    }
  }

  private _name = new JobNameReservation();
  private _submitWaits = false;
  private _options: PanelState.IOptions;
  private _compiler: CompileCycle;
  private _cells: ActiveCellWatcher;
  private _binding: NotebookBinding;
}

export namespace PanelState {
  export interface IOptions {
    service: KaleService;
    tracker: INotebookTracker;
    /** Open the logs view of a job. */
    openLogs: (name: string) => void;
    /** Open the view of a sweep. */
    openSweep?: (name: string) => void;
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
