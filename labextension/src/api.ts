import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import { SSEParser } from './sse';
import type { Kale } from './types';

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
 * The server ended a log stream with an `error` event (the job's logs
 * cannot be read); not retried.
 */
export class LogStreamError extends Error {}

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
 * How a log stream ended: the job's status then (without `follow` it may
 * still be running), and the reason when the server gives one.
 */
export interface ILogEnd {
  status: string;
  reason: string | null;
}

/**
 * Options of {@link KaleService.streamLogs}.
 */
export interface IStreamLogsOptions {
  /** One node's lines only; all nodes (multiplexed) by default. */
  node?: number;
  /** Keep the stream open for new lines until the job ends (default true). */
  follow?: boolean;
  /** Start with the last `tail` lines. */
  tail?: number;
  /** Called with the lines of each chunk received, in order. */
  onLines: (lines: Kale.ILogLine[]) => void;
  /** Called whenever the connection opens, drops or is retried. */
  onState?: (state: 'open' | 'reconnecting', error?: Error) => void;
  /** Stops the stream (the returned promise resolves with null). */
  signal?: AbortSignal;
  /** Milliseconds before the n-th reconnection (default: 0.5 s doubling to 10 s). */
  retryDelay?: (attempt: number) => number;
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

  getJob(name: string): Promise<Kale.IJobInfo> {
    return this._get(Private.jobPath(name));
  }

  async deleteJob(name: string): Promise<void> {
    await this._send(Private.jobPath(name), 'DELETE');
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
    const { signal, onLines, onState } = options;
    const retryDelay = options.retryDelay ?? Private.retryDelay;
    const offsets = new Map<number, number>();
    let lastId = '';
    let attempt = 0;
    while (!signal?.aborted) {
      let error: Error | undefined;
      try {
        const response = await this._openLogs(name, options, offsets, lastId);
        onState?.('open');
        const end = await Private.readEvents(response, event => {
          if (event.event === 'end') {
            return Private.endOf(event.data);
          }
          if (event.event === 'error') {
            throw new LogStreamError(Private.errorEvent(event.data));
          }
          if (event.id) {
            lastId = event.id;
          }
          const lines = Private.logLines(event.data, event.id);
          for (const line of lines) {
            offsets.set(line.node, line.offset);
          }
          if (lines.length > 0) {
            attempt = 0;
            onLines(lines);
          }
          return undefined;
        });
        if (end !== undefined) {
          return end;
        }
      } catch (reason) {
        if (signal?.aborted) {
          break;
        }
        if (
          reason instanceof ServerConnection.ResponseError ||
          reason instanceof LogStreamError
        ) {
          throw reason;
        }
        error = reason instanceof Error ? reason : new Error(String(reason));
      }
      onState?.('reconnecting', error);
      await Private.sleep(retryDelay(attempt++), signal);
    }
    return null;
  }

  private async _openLogs(
    name: string,
    options: IStreamLogsOptions,
    offsets: Map<number, number>,
    lastId: string
  ): Promise<Response> {
    const query: Record<string, string> = {
      follow: options.follow === false ? '0' : '1'
    };
    if (options.node !== undefined) {
      query.node = String(options.node);
    }
    const headers: Record<string, string> = { Accept: 'text/event-stream' };
    if (offsets.size > 0) {
      // Resume every node where it stopped; Last-Event-ID is the last event's.
      const ids = [...offsets].map(([node, offset]) => `${node}:${offset}`);
      query.offsets = ids.join(',');
      if (lastId) {
        headers['Last-Event-ID'] = lastId;
      }
    } else if (options.tail !== undefined) {
      query.tail = String(options.tail);
    }
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
  }

  private _get<T>(endPoint: string): Promise<T> {
    return requestAPI<T>(
      endPoint,
      { cache: Private.CACHE },
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

  /**
   * Feed a response's events to `handle` until it returns a value (which is
   * returned) or the body ends (undefined).
   */
  export async function readEvents<T>(
    response: Response,
    handle: (event: {
      id: string;
      event: string;
      data: string;
    }) => T | undefined
  ): Promise<T | undefined> {
    const parser = new SSEParser();
    const reader = response.body?.getReader?.();
    if (!reader) {
      // No streaming body (an old fetch polyfill): read it whole.
      for (const event of [
        ...parser.feed(await response.text()),
        ...parser.end()
      ]) {
        const result = handle(event);
        if (result !== undefined) {
          return result;
        }
      }
      return undefined;
    }
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        const text = done
          ? decoder.decode()
          : decoder.decode(value, { stream: true });
        const events = parser.feed(text);
        if (done) {
          events.push(...parser.end());
        }
        for (const event of events) {
          const result = handle(event);
          if (result !== undefined) {
            return result;
          }
        }
        if (done) {
          return undefined;
        }
      }
    } finally {
      void reader.cancel().catch(() => undefined);
    }
  }

  /**
   * The log line(s) of one `data:` payload: one JSON object (or a list).
   */
  export function logLines(data: string, id: string): Kale.ILogLine[] {
    let value: unknown;
    try {
      value = JSON.parse(data);
    } catch {
      return [];
    }
    const items = Array.isArray(value) ? value : [value];
    const lines: Kale.ILogLine[] = [];
    for (const item of items) {
      if (typeof item !== 'object' || item === null) {
        continue;
      }
      const raw = item as Record<string, unknown>;
      const [idNode, idOffset] = id.split(':').map(Number);
      const node = typeof raw.node === 'number' ? raw.node : idNode;
      const offset = typeof raw.offset === 'number' ? raw.offset : idOffset;
      if (!Number.isFinite(node) || !Number.isFinite(offset)) {
        continue;
      }
      lines.push({
        node,
        offset,
        rank: typeof raw.rank === 'number' ? raw.rank : null,
        text: typeof raw.text === 'string' ? raw.text : String(raw.text ?? '')
      });
    }
    return lines;
  }

  export function errorEvent(data: string): string {
    try {
      const value = JSON.parse(data) as { message?: unknown };
      if (typeof value.message === 'string' && value.message) {
        return value.message;
      }
    } catch {
      // fall through
    }
    return 'the logs cannot be read';
  }

  export function endOf(data: string): ILogEnd {
    try {
      const value = JSON.parse(data) as { status?: unknown; reason?: unknown };
      return {
        status: typeof value.status === 'string' ? value.status : '',
        reason: typeof value.reason === 'string' ? value.reason : null
      };
    } catch {
      return { status: '', reason: null };
    }
  }

  export function retryDelay(attempt: number): number {
    return Math.min(500 * 2 ** attempt, 10000);
  }

  export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise(resolve => {
      if (signal?.aborted) {
        resolve();
        return;
      }
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done);
      function done(): void {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      }
    });
  }
}
