import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import {
  followLogStream,
  type ILogEnd,
  type IStreamLogsOptions
} from './logstream';
import type { Kale } from './types';

export { LogStreamError } from './logstream';
export type { ILogEnd, IStreamLogsOptions } from './logstream';

/**
 * The URL namespace of the kale_ext server extension.
 */
export const API_NAMESPACE = 'kale-ext';

/**
 * A failed kale_ext request: the server's message, and its diagnostics when
 * the notebook does not compile (`POST jobs` answers 422).
 */
export class KaleAPIError extends ServerConnection.ResponseError {
  constructor(
    response: Response,
    message: string,
    readonly errors: Kale.IDiagnostic[] = [],
    readonly field?: string
  ) {
    super(response, message);
  }
}

/**
 * Call the kale_ext server extension and return its JSON body.
 *
 * @param endPoint Path below `<baseUrl>/kale-ext/`, e.g. `jobs/my-job`.
 * @param init Fetch options (method, body, headers).
 * @param settings Server connection settings; the page's settings by default.
 * @returns The parsed JSON body (`undefined` for an empty body).
 * @throws {KaleAPIError} On a non-OK response. Its message is the server's
 *   `message` (or `reason`) field, else the HTTP status; never the body of an
 *   HTML error page.
 */
export async function requestAPI<T>(
  endPoint: string,
  init: RequestInit = {},
  settings: ServerConnection.ISettings = ServerConnection.makeSettings()
): Promise<T> {
  const url = URLExt.join(settings.baseUrl, API_NAMESPACE, endPoint);
  const response = await ServerConnection.makeRequest(url, init, settings);
  const text = await response.text();
  let data: unknown;
  let isJSON = true;
  if (text.length > 0) {
    try {
      data = JSON.parse(text);
    } catch {
      // Not JSON: an HTML error page or a proxy's plain-text answer.
      isJSON = false;
    }
  }

  if (!response.ok) {
    throw Private.responseError(response, data);
  }
  if (!isJSON) {
    throw new KaleAPIError(
      response,
      `Invalid JSON in the response from ${API_NAMESPACE}/${endPoint}`
    );
  }
  return data as T;
}

/**
 * The one client of the kale_ext REST API (`docs/rest-api.md`): components
 * never call `fetch` themselves.
 */
export class KaleService {
  constructor(
    readonly serverSettings: ServerConnection.ISettings = ServerConnection.makeSettings()
  ) {}

  /** The backend jobs go to, and why. */
  getBackend(): Promise<Kale.IBackend> {
    return this._get('backend');
  }

  /**
   * The defaults every job starts from and the layer that set each; a
   * {@link KaleAPIError} naming the field (`defaults.cpu`) when a setting is
   * invalid.
   */
  getDefaults(): Promise<Kale.IDefaults> {
    return this._get('defaults');
  }

  /** The cell tags the tag editor offers. */
  async listTags(): Promise<Kale.ITag[]> {
    return (await this._get<{ tags: Kale.ITag[] }>('tags')).tags;
  }

  async listRuntimes(): Promise<Kale.IRuntime[]> {
    return (await this._get<{ runtimes: Kale.IRuntime[] }>('runtimes'))
      .runtimes;
  }

  /** The queues a job may wait in (Kueue's LocalQueues), or why none. */
  listQueues(): Promise<Kale.IQueues> {
    return this._get('queues');
  }

  getRuntime(name: string): Promise<Kale.IRuntime> {
    return this._get(`runtimes/${encodeURIComponent(name)}`);
  }

  /**
   * The Python packages of a runtime's image. Without `probe`, what the
   * server knows already (`packages: null` when nothing); with `probe`, an
   * unknown list is found by a small job on the runtime: it starts a pod and
   * may take minutes.
   */
  getRuntimePackages(
    name: string,
    options: { probe?: boolean; signal?: AbortSignal } = {}
  ): Promise<Kale.IRuntimePackages> {
    const query = options.probe ? URLExt.objectToQueryString({ probe: 1 }) : '';
    return requestAPI(
      `runtimes/${encodeURIComponent(name)}/packages${query}`,
      { cache: Private.CACHE, signal: options.signal },
      this.serverSettings
    );
  }

  /**
   * Compile a notebook with the panel's options. Compile and config errors
   * are part of the result (`ok: false`), not exceptions.
   */
  compile(
    body: Kale.JobRequest,
    signal?: AbortSignal
  ): Promise<Kale.ICompileResult> {
    return this._send('compile', 'POST', body, signal);
  }

  /**
   * Submit a job; a notebook that does not compile throws a
   * {@link KaleAPIError} carrying the diagnostics.
   */
  submit(body: Kale.JobRequest): Promise<Kale.ISubmitResult> {
    return this._send('jobs', 'POST', body);
  }

  /** Every job, newest first. */
  async listJobs(): Promise<Kale.IJobInfo[]> {
    return (await this._get<{ jobs: Kale.IJobInfo[] }>('jobs')).jobs;
  }

  getJob(name: string, signal?: AbortSignal): Promise<Kale.IJobInfo> {
    return this._get(Private.jobPath(name), signal);
  }

  async deleteJob(name: string): Promise<void> {
    await this._send(Private.jobPath(name), 'DELETE');
  }

  /**
   * Submit a job again as it was recorded (its notebook snapshot and
   * options), under a new name, with only `body`'s overrides.
   */
  rerunJob(
    name: string,
    body: Kale.IRerunBody = {}
  ): Promise<Kale.ISubmitResult> {
    return this._send(`${Private.jobPath(name)}/rerun`, 'POST', body);
  }

  /**
   * Resume a job that ended from its last checkpoint: a rerun in its
   * lineage (its parent recorded), with `body`'s overrides.
   */
  resumeJob(
    name: string,
    body: Kale.IResumeBody = {}
  ): Promise<Kale.ISubmitResult> {
    return this._send(`${Private.jobPath(name)}/resume`, 'POST', body);
  }

  /**
   * Stop a running job and keep it: it reads Stopped (who, when).
   */
  stopJob(name: string): Promise<Kale.IJobInfo> {
    return this._send(`${Private.jobPath(name)}/stop`, 'POST');
  }

  /**
   * Remove the finished jobs older than `body.older_than` (or, `dry_run`,
   * list them); never a created, queued or running one.
   */
  pruneJobs(body: Kale.IPruneBody): Promise<Kale.IPruneResult> {
    return this._send('jobs/prune', 'POST', body);
  }

  /** The panel's form kept for the notebook at `path` (state null: none). */
  getPanelState(path: string): Promise<Kale.IPanelStateRecord> {
    return this._get(`panel-state${URLExt.objectToQueryString({ path })}`);
  }

  /** Keep the panel's form for the notebook at `path` (the last one wins). */
  savePanelState(
    path: string,
    state: unknown
  ): Promise<Kale.IPanelStateRecord> {
    const query = URLExt.objectToQueryString({ path });
    return this._send(`panel-state${query}`, 'PUT', state);
  }

  /**
   * Start a sweep: each trial an ordinary job. A bad spec or option is a
   * {@link KaleAPIError} naming it (`param.lr`, `trials`).
   */
  startSweep(body: Kale.SweepRequest): Promise<Kale.ISweep> {
    return this._send('sweeps', 'POST', body);
  }

  /** Every sweep with its trials, newest first. */
  async listSweeps(): Promise<Kale.ISweep[]> {
    return (await this._get<{ sweeps: Kale.ISweep[] }>('sweeps')).sweeps;
  }

  /**
   * What differs between two to ten jobs, with the unified diff of their
   * generated functions when it changed.
   */
  diffJobs(names: string[]): Promise<Kale.IComparison> {
    const query = URLExt.objectToQueryString({ jobs: names.join(',') });
    return this._get(`diff${query}`);
  }

  /** A sweep with its trials, best first. */
  getSweep(name: string): Promise<Kale.ISweep> {
    return this._get(`sweeps/${encodeURIComponent(name)}`);
  }

  /**
   * Cancel a sweep: no more trials start, its running trials are stopped
   * and kept (reading Cancelled). The sweep, now Cancelled; a
   * {@link KaleAPIError} (409) once it has ended.
   */
  cancelSweep(name: string): Promise<Kale.ISweep> {
    return this._send(`sweeps/${encodeURIComponent(name)}`, 'DELETE');
  }

  /** What a job wrote to `KALE_EXT_OUTPUT_DIR`, with sizes. */
  jobOutputs(name: string, signal?: AbortSignal): Promise<Kale.IJobOutputs> {
    return this._get(`${Private.jobPath(name)}/outputs`, signal);
  }

  /**
   * Where Jupyter serves a file under the server root (`files/<path>`, as
   * JupyterLab's own downloads: with the `_xsrf` cookie's token); with
   * `download`, served as an attachment (`?download=1`).
   */
  fileUrl(path: string, download = false): string {
    const url = new URL(
      URLExt.join(
        this.serverSettings.baseUrl,
        'files',
        URLExt.encodeParts(path)
      ),
      window.location.href
    );
    let cookie = '';
    try {
      cookie = document.cookie;
    } catch {
      // a sandboxed page has none
    }
    const xsrf = cookie.match('\\b_xsrf=([^;]*)\\b');
    if (xsrf) {
      url.searchParams.append('_xsrf', xsrf[1]);
    }
    if (download) {
      url.searchParams.append('download', '1');
    }
    return url.toString();
  }

  async listEvents(name: string): Promise<Kale.IJobEvent[]> {
    return (
      await this._get<{ events: Kale.IJobEvent[] }>(
        `${Private.jobPath(name)}/events`
      )
    ).events;
  }

  /**
   * Read a job's logs (`text/event-stream`) until its `end` event, which
   * resolves the promise with the job's status and reason. When the connection
   * drops before the end, it reconnects with the last offset of every node,
   * so no line is delivered twice or lost. Resolves with null when aborted.
   *
   * @throws {KaleAPIError} When the server refuses the request (e.g. the job
   *   does not exist), {@link LogStreamError} when it ends the stream with an
   *   `error` event; dropped connections are retried instead.
   */
  async streamLogs(
    name: string,
    options: IStreamLogsOptions
  ): Promise<ILogEnd | null> {
    return followLogStream(options, async (query, headers) => {
      const url =
        URLExt.join(
          this.serverSettings.baseUrl,
          API_NAMESPACE,
          Private.jobPath(name),
          'logs'
        ) + URLExt.objectToQueryString(query);
      const response = await ServerConnection.makeRequest(
        url,
        { headers, signal: options.signal, cache: Private.CACHE },
        this.serverSettings
      );
      if (!response.ok) {
        let data: unknown;
        try {
          data = JSON.parse(await response.text());
        } catch {
          data = undefined;
        }
        throw Private.responseError(response, data);
      }
      return response;
    });
  }

  private _get<T>(endPoint: string, signal?: AbortSignal): Promise<T> {
    return requestAPI<T>(
      endPoint,
      { cache: Private.CACHE, signal },
      this.serverSettings
    );
  }

  private _send<T>(
    endPoint: string,
    method: string,
    body?: unknown,
    signal?: AbortSignal
  ): Promise<T> {
    const init: RequestInit = { method, signal, cache: Private.CACHE };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers = { 'Content-Type': 'application/json' };
    }
    return requestAPI<T>(endPoint, init, this.serverSettings);
  }
}

namespace Private {
  /**
   * Always ask the server (`no-store`, JupyterLab's default, would add a
   * `?<timestamp>` cache buster to the URL, a query parameter the API
   * does not take).
   */
  export const CACHE: RequestCache = 'no-cache';

  export function jobPath(name: string): string {
    return `jobs/${encodeURIComponent(name)}`;
  }

  /**
   * The error for a failed response, with the server's message.
   */
  export function responseError(
    response: Response,
    data: unknown
  ): KaleAPIError {
    const body =
      typeof data === 'object' && data !== null
        ? (data as Record<string, unknown>)
        : {};
    let message = '';
    for (const field of [body.message, body.reason]) {
      if (typeof field === 'string' && field.length > 0) {
        message = field;
        break;
      }
    }
    if (!message) {
      const status = `${response.status} ${response.statusText}`.trim();
      message = `${API_NAMESPACE} request failed: ${status}`;
    }
    const errors = Array.isArray(body.errors)
      ? (body.errors as Kale.IDiagnostic[])
      : [];
    const field = typeof body.field === 'string' ? body.field : undefined;
    return new KaleAPIError(response, message, errors, field);
  }
}
