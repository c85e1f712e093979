import type { NotebookPanel } from '@jupyterlab/notebook';

import type { KaleService } from '../../api';
import type { IFieldError } from '../../form/errors';
import { formErrors } from '../../form/fields';
import { sameForm } from '../../form/metadata';
import { IFormContext, IJobForm, emptyForm } from '../../form/model';
import type { IPanelValues } from '../../form/restore';
import {
  ISweepForm,
  emptySweep,
  sameSweep,
  validateSweep
} from '../../form/sweep';
import { validateForm } from '../../form/validation';
import type { Kale } from '../../types';
import { PanelMemory } from '../notebook/memory';
import type { ServerFacts } from './server-facts';
import { readForm, readSweep, writeForm } from '../notebook/notebook-io';

/**
 * The form and the sweep of the bound notebook, and where they are kept:
 * read from the notebook's metadata and written back through its model
 * (so a change can be undone), and kept on the server ({@link PanelMemory})
 * so a reload restores the values last shown; their fields' problems.
 */
export class FormState {
  constructor(options: FormState.IOptions) {
    this._options = options;
    this.memory = new PanelMemory(options.service, options.changed);
  }

  /** The form kept on the server, so a reload restores it (and says so). */
  readonly memory: PanelMemory;

  form: IJobForm = emptyForm();
  /** The swept parameters and how to search (Submit starts a sweep). */
  sweep: ISweepForm = emptySweep();
  fieldErrors: IFieldError[] = [];

  /** The runtime the job will use: chosen, else what compile resolved. */
  get runtime(): Kale.IRuntime | undefined {
    const { runtimes } = this._options.server;
    const name = this.form.runtime || this._options.compile()?.runtime;
    if (!name && runtimes.length === 1) {
      return runtimes[0]; // the backend's only runtime is the default
    }
    return runtimes.find(r => r.name === name);
  }

  /** What serializing and validating the form need from the server. */
  get context(): IFormContext {
    return {
      parameters: this._options.compile()?.parameters,
      runtime: this.runtime,
      local: this._options.server.backend?.name === 'local',
      // a sweep's name is its own (its trials get names of their own)
      jobs: Object.keys(this.sweep.params).length
        ? undefined
        : this._options.jobs()?.map(j => j.name)
    };
  }

  /**
   * The jobs list changed: checked again when the typed name became taken
   * (or free), so the form says so before Submit.
   */
  jobsListed(): void {
    if (this._nameTaken() !== this._taken) {
      this.validate();
      this._options.changed();
    }
  }

  /**
   * The user changed the form; the notebook's metadata follows, and the
   * notebook is checked again.
   */
  update(change: Partial<IJobForm>): void {
    this.form = { ...this.form, ...change };
    this._options.edited();
    this.validate();
    this._keep();
    this._options.changed();
    this._options.recheck();
  }

  /** The user changed the sweep (kept with the form). */
  updateSweep(change: Partial<ISweepForm>): void {
    this.sweep = { ...this.sweep, ...change };
    this._options.edited();
    this.validate();
    this._keep();
    this._options.changed();
  }

  /**
   * Go back to the notebook's own values from those restored at load (the
   * fields the note still lists).
   */
  useNotebook(): void {
    const values = this.memory.useNotebook({
      form: this.form,
      sweep: this.sweep
    });
    if (values) {
      this._apply(values);
    }
  }

  /** Bound to another notebook (or none): its form is read once its file is. */
  reset(): void {
    this.form = emptyForm();
    this.sweep = emptySweep();
    this.memory.reset();
  }

  /**
   * Take the form from the notebook's metadata, unless it already says the
   * same (then the user's text, half-typed values included, stays).
   */
  readMetadata(): void {
    const model = this._options.notebook()?.model;
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
      this.validate();
      this._remember();
      this._options.changed();
      this._options.recheck();
    } else if (sweepChanged) {
      this.validate();
      this._remember();
      this._options.changed();
    }
  }

  /**
   * The notebook is loaded: the values kept from the last session, when
   * they differ from the notebook's, are the form's (the note says so).
   */
  async recall(panel: NotebookPanel): Promise<void> {
    const kept = await this.memory.recall(panel.context.localPath, {
      form: this.form,
      sweep: this.sweep
    });
    if (kept && this._options.notebook() === panel) {
      this._apply(kept);
    }
  }

  /**
   * The fields' problems: the panel's checks as you type, and the last
   * compile's errors about a field (a parameter's type, ...).
   */
  validate(): void {
    this._taken = this._nameTaken();
    const { compile, jobName } = this._options;
    const result = compile();
    this.fieldErrors = formErrors(
      [
        ...validateForm(this.form, this.context),
        ...validateSweep(
          this.sweep,
          result?.parameters,
          this.form.name.trim() || jobName()
        )
      ],
      result,
      this.form
    );
    this._options.validated();
  }

  /** The form and sweep are `values` (the notebook's metadata follows). */
  private _apply(values: IPanelValues): void {
    this.form = values.form;
    this.sweep = values.sweep;
    this._keep();
    this.validate();
    this._options.changed();
    this._options.recheck();
  }

  /** Into the notebook's metadata (once its file is loaded) and memory. */
  private _keep(): void {
    const model = this._options.notebook()?.model;
    if (model && this._options.ready()) {
      // (not loaded yet: the file's metadata is read once it is)
      writeForm(model, this.form, this.sweep);
    }
    this._remember();
  }

  private _remember(): void {
    this.memory.remember(
      { form: this.form, sweep: this.sweep },
      this._options.notebook()?.context.localPath
    );
  }

  /** Whether the typed name is a listed job's. */
  private _nameTaken(): boolean {
    const name = this.form.name.trim();
    return !!name && !!this.context.jobs?.includes(name);
  }

  private _options: FormState.IOptions;
  private _taken = false;
}

export namespace FormState {
  export interface IOptions {
    service: KaleService;
    /** The bound notebook, or null. */
    notebook: () => NotebookPanel | null;
    /** Whether its file is loaded (its metadata can be written). */
    ready: () => boolean;
    /** What the server offers (its runtimes, its backend). */
    server: ServerFacts;
    /** The last compile's answer. */
    compile: () => Kale.ICompileResult | null;
    /** The name the job gets when the form names none. */
    jobName: () => string | null;
    /** The jobs listed (null: not yet). */
    jobs: () => Kale.IJobInfo[] | null;
    /** Something shown changed. */
    changed: () => void;
    /** The user changed the form or the sweep (before it is checked). */
    edited: () => void;
    /** The fields were checked again. */
    validated: () => void;
    /** The notebook should be checked again (compiled). */
    recheck: () => void;
  }
}
