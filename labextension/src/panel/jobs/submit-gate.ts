import type { NotebookPanel } from '@jupyterlab/notebook';

import type { IFieldError } from '../../form/errors';
import { ISweepForm, isSweeping, sweepRequest } from '../../form/sweep';
import type { Kale } from '../../types';
import type { CompileCycle } from '../preview/compile-cycle';
import type { JobActions } from './job-actions';

/**
 * When Submit can be pressed, and what a press does: the job (or the sweep)
 * of the notebook as its last check found it.
 *
 * A check of a notebook that compiled leaves Submit enabled: such a check
 * also starts by itself (the kernel writes the notebook's language_info
 * when it connects), and a click landing as Submit turned disabled for it
 * was lost without a word. A click during a check waits for it, and says
 * why nothing went if the check then found a problem.
 */
export class SubmitGate {
  constructor(options: SubmitGate.IOptions) {
    this._options = options;
  }

  /** Why Submit is disabled, or '' when it is not. */
  get blocker(): string {
    const { notebook, fieldErrors, compiler } = this._options;
    const compile = compiler.result;
    if (!notebook()) {
      return 'Open a notebook first';
    }
    if (this.submitting) {
      return 'Submitting…';
    }
    if (fieldErrors().length > 0) {
      return 'Fix the highlighted fields first';
    }
    if (!compile || (compiler.pending && !compile.ok)) {
      return 'Checking the notebook…';
    }
    if (!compile.ok) {
      return 'Fix the errors listed above first';
    }
    return '';
  }

  /** Whether a Submit is on its way (or waits for the check it asked for). */
  get submitting(): boolean {
    return this._options.actions.submitting || this._waits;
  }

  /** Beside an enabled Submit: the check a click would wait for, or ''. */
  get note(): string {
    return !this.blocker && this._options.compiler.pending
      ? 'Checking the notebook…'
      : '';
  }

  /** Submit the notebook with the form's choices (a sweep if it sweeps). */
  async submit(): Promise<void> {
    const { actions, compiler, notebook, sweep } = this._options;
    if (compiler.pending) {
      // A change still being checked: submit what the check says, once in.
      this._waits = true;
      this._options.changed();
      await compiler.settled();
      this._waits = false;
    }
    const blocker = this.blocker;
    if (blocker) {
      actions.refuse(blocker); // the check found a problem: say so
      return;
    }
    const body = this._options.request();
    if (!body) {
      return;
    }
    const went = isSweeping(sweep())
      ? // the name shown is the sweep's; every parameter set applies to its trials
        await actions.submitSweep(sweepRequest(body, sweep()))
      : await actions.submit(body, notebook()?.context.path);
    if (went) {
      this._options.submitted();
    }
  }

  private _options: SubmitGate.IOptions;
  private _waits = false;
}

export namespace SubmitGate {
  export interface IOptions {
    actions: JobActions;
    compiler: CompileCycle;
    /** The bound notebook, or null. */
    notebook: () => NotebookPanel | null;
    /** The form's fields' problems. */
    fieldErrors: () => IFieldError[];
    /** The sweep the form describes. */
    sweep: () => ISweepForm;
    /** The job's request (the notebook's path when it is saved). */
    request: () => Kale.JobRequest | null;
    /** A job or sweep went: its name is taken. */
    submitted: () => void;
    /** Something shown changed. */
    changed: () => void;
  }
}
