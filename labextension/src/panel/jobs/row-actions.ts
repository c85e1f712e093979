import type { KaleService } from '../../api';
import { CappedMap } from '../../capped';
import { errorMessage } from '../../errors';
import { fromMetadata } from '../../form/metadata';
import type { IJobForm } from '../../form/model';
import type { Kale } from '../../types';
import type { JobsModel } from './jobs-model';
import { jobOptions, notebookOf } from './jobs-view';

/**
 * A job row's own actions and what they say, at that row: Rerun (the job
 * as the server recorded it: its notebook snapshot and options, a new
 * name; never the form's current state), Resume (a rerun in its lineage,
 * from its last checkpoint), Stop (its processes or pods end,
 * the job is kept and reads Stopped) and Edit and rerun (the job's
 * recorded options loaded into the form).
 */
export class RowActions {
  constructor(options: RowActions.IOptions) {
    this._options = options;
    this._messages = new CappedMap(options.maxMessages ?? MAX_MESSAGES);
  }

  /** The rows whose action is on its way. */
  readonly busy = new Set<string>();

  /** What the last action of a row said, or undefined. */
  message(name: string): RowActions.IMessage | undefined {
    return this._messages.get(name);
  }

  /**
   * Submit the job again as recorded. Returns the new job's name (its logs
   * open), or null when the server refused (the row says why).
   */
  async rerun(name: string): Promise<string | null> {
    return this._again(name, () => this._options.service.rerunJob(name));
  }

  /**
   * Resume the job from its last checkpoint (a rerun in its lineage).
   * Returns the new job's name (its logs open), or null when the server
   * refused (the row says why).
   */
  async resume(name: string): Promise<string | null> {
    return this._again(name, () => this._options.service.resumeJob(name));
  }

  private async _again(
    name: string,
    submit: () => Promise<Kale.ISubmitResult>
  ): Promise<string | null> {
    return this._act(name, async () => {
      const { jobs, openLogs } = this._options;
      const result = await submit();
      jobs.refresh();
      jobs.reveal(result.name);
      openLogs(result.name);
      return result.name;
    });
  }

  /**
   * Stop the job and keep it. Returns whether it stopped.
   */
  async stop(name: string): Promise<boolean> {
    const stopped = await this._act(name, async () => {
      await this._options.service.stopJob(name);
      this._options.jobs.refresh();
      return true;
    });
    return stopped === true;
  }

  /**
   * The form the job's recorded options stand for (a new name to come),
   * for the notebook at `path`; null, with the row saying why, when the
   * job is another notebook's. Env values the record hides are left empty
   * and the row names them.
   */
  recordedForm(job: Kale.IJobInfo, path: string | undefined): IJobForm | null {
    const from = notebookOf(job);
    if (!path || (from !== null && from !== path)) {
      this.say(
        job.name,
        'error',
        `Open ${from ?? 'its notebook'} to edit this job's options`
      );
      return null;
    }
    const { config, ...options } = jobOptions(job);
    delete options.name;
    const form = fromMetadata({ options, config: config ?? {} });
    const hidden = form.env.filter(
      r => r.source === 'value' && r.value === REDACTED
    );
    form.env = form.env.map(r =>
      hidden.includes(r) ? { ...r, value: '' } : r
    );
    this.say(
      job.name,
      'info',
      hidden.length
        ? `Its options are in the form; set ${hidden.map(r => r.name).join(', ')} again (env values are not kept)`
        : 'Its options are in the form: change them, then Submit'
    );
    return form;
  }

  /** Forget what a row said. */
  dismiss(name: string): void {
    if (this._messages.delete(name)) {
      this._options.changed();
    }
  }

  private async _act<T>(
    name: string,
    action: () => Promise<T>
  ): Promise<T | null> {
    if (this.busy.has(name)) {
      return null;
    }
    this.busy.add(name);
    this._messages.delete(name);
    this._options.changed();
    try {
      return await action();
    } catch (reason) {
      this._messages.set(name, { kind: 'error', text: errorMessage(reason) });
      return null;
    } finally {
      this.busy.delete(name);
      this._options.changed();
    }
  }

  /** Say something at a job's row (until dismissed or its next action). */
  say(name: string, kind: 'info' | 'error', text: string): void {
    this._messages.set(name, { kind, text });
    this._options.changed();
  }

  private _options: RowActions.IOptions;
  private _messages: CappedMap<string, RowActions.IMessage>;
}

/**
 * The most rows whose message is kept (each until dismissed or the row's
 * next action): one more drops the oldest said, so a page that acts on job
 * after job keeps a bounded memory.
 */
export const MAX_MESSAGES = 500;

/** How a job's record shows a literal env value (kale_ext/job/trainjob.py). */
export const REDACTED = '<redacted>';

export namespace RowActions {
  export interface IMessage {
    kind: 'info' | 'error';
    text: string;
  }

  export interface IOptions {
    service: KaleService;
    jobs: JobsModel;
    /** Open the logs view of a job. */
    openLogs: (name: string) => void;
    changed: () => void;
    /** The most rows whose message is kept (default MAX_MESSAGES). */
    maxMessages?: number;
  }
}
