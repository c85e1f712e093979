import type { IDisposable } from '@lumino/disposable';
import { Poll } from '@lumino/polling';

import { KaleAPIError, type KaleService } from '../api';
import type { JobTimelines } from '../timeline';

/**
 * A job's status (`GET jobs/{name}`), asked for its timeline while the page
 * is visible, until the job ends or is gone; the server's failures back off.
 */
export class JobStatusPoll implements IDisposable {
  constructor(options: JobStatusPoll.IOptions) {
    const { service, name, timelines } = options;
    this._poll = new Poll({
      factory: async () => {
        try {
          timelines.observe(await service.getJob(name, this._abort.signal));
        } catch (reason) {
          if (this._abort.signal.aborted) {
            return; // disposed (the tab closed, the job deleted)
          }
          if (
            reason instanceof KaleAPIError &&
            reason.response.status === 404
          ) {
            this._note = 'the job is gone';
            options.changed();
            return;
          }
          throw reason; // backs off
        }
      },
      frequency: { interval: options.interval, backoff: true, max: 30000 },
      standby: () =>
        this._note !== '' ||
        timelines.get(name)?.final === true ||
        'when-hidden',
      name: `kale-ext:status:${name}`
    });
  }

  /** Why the status is not asked for any more ('' while it is). */
  get note(): string {
    return this._note;
  }

  /**
   * Whether the status is still asked for: no longer once the job has ended
   * or is gone (nor while the page is hidden).
   */
  get active(): boolean {
    return !this._poll.isDisposed && this._poll.state.phase !== 'standby';
  }

  get isDisposed(): boolean {
    return this._poll.isDisposed;
  }

  /**
   * Ask now (the log stream ended: the final state, for the timeline).
   */
  refresh(): void {
    void this._poll.refresh();
  }

  dispose(): void {
    this._abort.abort(); // a request on its way too
    this._poll.dispose();
  }

  private _abort = new AbortController();
  private _poll: Poll;
  private _note = '';
}

export namespace JobStatusPoll {
  export interface IOptions {
    service: KaleService;
    name: string;
    /** Where the statuses go. */
    timelines: JobTimelines;
    /** Milliseconds between two polls. */
    interval: number;
    /** Called when the note changes. */
    changed: () => void;
  }
}
