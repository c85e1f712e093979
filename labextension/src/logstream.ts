import { ServerConnection } from '@jupyterlab/services';

import { SSEParser } from './sse';
import type { Kale } from './types';

/**
 * Reading a job's log stream (`GET jobs/{name}/logs`, `text/event-stream`):
 * its events, the lines they carry, reconnecting where every node stopped.
 * `KaleService.streamLogs` is how the rest of the extension reads it.
 */

/**
 * The server ended a log stream with an `error` event (the job's logs
 * cannot be read); not retried.
 */
export class LogStreamError extends Error {}

/**
 * How a log stream ended: the job's status then (without `follow` it may
 * still be running), and the reason when the server gives one.
 */
export interface ILogEnd {
  status: string;
  /** The status as every view shows it (`Stopped`, `Cancelled`), when given. */
  status_text?: string;
  reason: string | null;
}

/**
 * Options of `KaleService.streamLogs`.
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
 * Open the stream with a query and headers (the request and its errors are
 * the service's).
 */
export type LogStreamOpener = (
  query: Record<string, string>,
  headers: Record<string, string>
) => Promise<Response>;

/**
 * Read a job's logs until their `end` event, which resolves with the job's
 * status and reason. When the connection drops before the end, reconnect
 * with the last offset of every node, so no line is delivered twice or
 * lost. Resolves with null when aborted.
 *
 * @throws The server's refusal (a `ServerConnection.ResponseError`, e.g.
 *   the job does not exist), {@link LogStreamError} when it ends the stream
 *   with an `error` event; dropped connections are retried instead.
 */
export async function followLogStream(
  options: IStreamLogsOptions,
  open: LogStreamOpener
): Promise<ILogEnd | null> {
  const { signal, onLines, onState } = options;
  const retryDelay = options.retryDelay ?? Private.retryDelay;
  const offsets = new Map<number, number>();
  let lastId = '';
  let attempt = 0;
  while (!signal?.aborted) {
    let error: Error | undefined;
    try {
      const response = await open(...Private.request(options, offsets, lastId));
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

namespace Private {
  /**
   * The query and headers of a (re)connection: resume every node where it
   * stopped; Last-Event-ID is the last event's.
   */
  export function request(
    options: IStreamLogsOptions,
    offsets: Map<number, number>,
    lastId: string
  ): [Record<string, string>, Record<string, string>] {
    const query: Record<string, string> = {
      follow: options.follow === false ? '0' : '1'
    };
    if (options.node !== undefined) {
      query.node = String(options.node);
    }
    const headers: Record<string, string> = { Accept: 'text/event-stream' };
    if (offsets.size > 0) {
      const ids = [...offsets].map(([node, offset]) => `${node}:${offset}`);
      query.offsets = ids.join(',');
      if (lastId) {
        headers['Last-Event-ID'] = lastId;
      }
    } else if (options.tail !== undefined) {
      query.tail = String(options.tail);
    }
    return [query, headers];
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
      const value = JSON.parse(data) as {
        status?: unknown;
        status_text?: unknown;
        reason?: unknown;
      };
      const end: ILogEnd = {
        status: typeof value.status === 'string' ? value.status : '',
        reason: typeof value.reason === 'string' ? value.reason : null
      };
      if (typeof value.status_text === 'string') {
        end.status_text = value.status_text;
      }
      return end;
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
