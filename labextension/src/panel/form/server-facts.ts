import type { KaleService } from '../../api';
import { errorMessage } from '../../errors';
import type { Kale } from '../../types';

/**
 * What the server offers the panel: the backend, its runtimes and queues, the defaults
 * jobs start from, and the tag grammar. Loading again (the user's settings
 * changed) keeps what a failed request could not replace.
 */
export class ServerFacts {
  constructor(service: KaleService) {
    this._service = service;
  }

  backend: Kale.IBackend | null = null;
  runtimes: Kale.IRuntime[] = [];
  /** The queues a job may wait in (`GET queues`), and why there are none. */
  queues: Kale.IQueues | null = null;
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

  /**
   * Fetch the facts; the tags (which settings do not change) only when
   * `withTags`. When loads overlap, the last one started wins.
   */
  async load(withTags: boolean): Promise<void> {
    const generation = ++this._loads;
    const errors: string[] = [];
    const get = <T>(promise: Promise<T>): Promise<T | undefined> =>
      promise.catch(reason => {
        errors.push(errorMessage(reason));
        return undefined;
      });
    let defaultsError = '';
    const service = this._service;
    const [backend, runtimes, defaults, tags, queues] = await Promise.all([
      get(service.getBackend()),
      get(service.listRuntimes()),
      get(
        service.getDefaults().catch(reason => {
          defaultsError = errorMessage(reason);
          throw reason;
        })
      ),
      withTags ? get(service.listTags()) : undefined,
      get(service.listQueues())
    ]);
    this.tags = tags ?? this.tags;
    if (generation === this._loads) {
      this.backend = backend ?? this.backend;
      this.runtimes = runtimes ?? this.runtimes;
      this.queues = queues ?? this.queues;
      this.defaults = defaults ?? this.defaults;
      this.defaultsError = defaultsError;
      this.loadError = errors[0] ?? '';
    }
  }

  private _service: KaleService;
  private _loads = 0;
}
