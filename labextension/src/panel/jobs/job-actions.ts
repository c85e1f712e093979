import { KaleAPIError, KaleService } from '../../api';
import { errorMessage } from '../../errors';
import type { Kale } from '../../types';
import type { JobsModel } from './jobs-model';

/**
 * A message under the Submit button.
 */
export interface INotice {
  kind: 'info' | 'error';
  text: string;
  /** The job a "Submitted" notice is about. */
  job?: string;
  details?: string[];
  diagnostics?: Kale.IDiagnostic[];
}

/**
 * Submit a job and say how it went: its name, backend and warnings, or the
 * server's message and the diagnostics of a notebook that does not compile.
 * The jobs list remembers it and refreshes.
 */
export async function submitJob(
  service: KaleService,
  jobs: JobsModel,
  body: Kale.JobRequest
): Promise<INotice> {
  try {
    const result = await service.submit(body);
    jobs.remember(result.name);
    jobs.refresh();
    return {
      kind: 'info',
      text: `Submitted ${result.name} (${result.backend})`,
      job: result.name,
      details: result.warnings
    };
  } catch (reason) {
    return {
      kind: 'error',
      text: errorMessage(reason),
      diagnostics: reason instanceof KaleAPIError ? reason.errors : []
    };
  }
}

/**
 * Delete a job and say how it went.
 */
export async function deleteJob(
  jobs: JobsModel,
  name: string
): Promise<INotice> {
  try {
    await jobs.delete(name);
    return { kind: 'info', text: `Deleted ${name}` };
  } catch (reason) {
    return { kind: 'error', text: errorMessage(reason) };
  }
}

/**
 * Submit and delete, and what they tell the user: the notice, and
 * the job submitted last from each notebook (its status stays in view).
 * A submitted job's logs open, and its row is brought into view.
 */
export class JobActions {
  constructor(options: JobActions.IOptions) {
    this._options = options;
  }

  /** Whether a submit is on its way. */
  submitting = false;
  /** What the last action told (a submit, a delete), or null. */
  notice: INotice | null = null;

  /**
   * The job submitted last from the notebook at `path` (here, this
   * session): its name, and how the jobs list knows it once listed.
   */
  current(path: string | undefined): JobActions.ICurrent | null {
    const name = (path && this._current.get(path)) || null;
    if (!name) {
      return null;
    }
    return { name, job: this._options.jobs.jobs?.find(j => j.name === name) };
  }

  /**
   * Submit a job for the notebook at `path`. Returns whether it went.
   */
  async submit(body: Kale.JobRequest, path?: string): Promise<boolean> {
    if (this.submitting) {
      return false;
    }
    const { jobs, changed } = this._options;
    this.submitting = true;
    this.notice = null;
    changed();
    this.notice = await submitJob(this._options.service, jobs, body);
    this.submitting = false;
    const name = this.notice.kind === 'info' ? jobs.lastSubmitted : null;
    if (name) {
      if (path) {
        this._current.set(path, name);
      }
      jobs.reveal(name);
      this._options.openLogs(name, path); // in place of its last submit's
    }
    changed();
    return name !== null;
  }

  /**
   * Start a sweep for the notebook at `path`: its view opens. Returns
   * whether it started.
   */
  async submitSweep(body: Kale.SweepRequest): Promise<boolean> {
    if (this.submitting) {
      return false;
    }
    const { service, jobs, changed } = this._options;
    this.submitting = true;
    this.notice = null;
    changed();
    let started: Kale.ISweep | null = null;
    try {
      started = await service.startSweep(body);
      jobs.refresh();
      const trials = started.max_trials ?? started.trials.length;
      this.notice = {
        kind: 'info',
        text: `Started sweep ${started.name} (${started.search}${trials ? `, ${trials} trials` : ''}, ${started.parallel} at once)`
      };
    } catch (reason) {
      this.notice = {
        kind: 'error',
        text: errorMessage(reason),
        diagnostics: reason instanceof KaleAPIError ? reason.errors : []
      };
    }
    this.submitting = false;
    if (started) {
      this._options.openSweep?.(started.name);
    }
    changed();
    return started !== null;
  }

  /**
   * Delete a job, after asking.
   */
  async delete(name: string): Promise<void> {
    const confirm = this._options.confirm;
    if (confirm && !(await confirm(name))) {
      return;
    }
    this.notice = await deleteJob(this._options.jobs, name);
    this._options.changed();
  }

  /**
   * The form was checked: a "Submitted …" notice is about an older form,
   * gone once this one cannot be submitted (`ok` false).
   */
  formChecked(ok: boolean): void {
    if (!ok && this.notice?.kind === 'info') {
      this.clearNotice();
    }
  }

  /**
   * Say why a Submit did not go (`blocker`: what the panel says beside it);
   * nothing while a submit is on its way.
   */
  refuse(blocker: string): void {
    if (!this.submitting) {
      this.notice = { kind: 'error', text: `Not submitted: ${blocker}` };
      this._options.changed();
    }
  }

  /**
   * Forget the notice (the form changed: it would be about an older one).
   */
  clearNotice(): void {
    if (this.notice) {
      this.notice = null;
      this._options.changed();
    }
  }

  private _options: JobActions.IOptions;
  private _current = new Map<string, string>();
}

export namespace JobActions {
  /**
   * The current job: its name, and its state once listed.
   */
  export interface ICurrent {
    name: string;
    job?: Kale.IJobInfo;
  }

  export interface IOptions {
    service: KaleService;
    jobs: JobsModel;
    /** Open the logs view of a job. */
    /** Open a job's logs; `notebook`: opened by that notebook's submit. */
    openLogs: (name: string, notebook?: string) => void;
    /** Open the view of a sweep. */
    openSweep?: (name: string) => void;
    /** Ask before deleting a job. */
    confirm?: (name: string) => Promise<boolean>;
    /** Called when something shown changed. */
    changed: () => void;
  }
}
