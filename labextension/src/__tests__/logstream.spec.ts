import { KaleAPIError, KaleService, LogStreamError } from '../api';
import type { Kale } from '../types';
import { BASE, fakeServer, json, SETTINGS } from './helpers';

// jsdom has no TextDecoder: enough of one for ASCII.
if (typeof globalThis.TextDecoder === 'undefined') {
  (globalThis as { TextDecoder: unknown }).TextDecoder = class {
    decode(bytes?: Uint8Array): string {
      return bytes ? String.fromCharCode(...bytes) : '';
    }
  };
}

/**
 * A response whose body arrives in the given chunks (then ends).
 */
function stream(chunks: string[]): Response {
  const bytes = chunks.map(c => Uint8Array.from(c, ch => ch.charCodeAt(0)));
  return {
    ok: true,
    status: 200,
    statusText: 'OK',
    body: {
      getReader: () => ({
        read: async () =>
          bytes.length
            ? { done: false, value: bytes.shift() }
            : { done: true, value: undefined },
        cancel: async () => undefined
      })
    }
  } as unknown as Response;
}

function event(node: number, offset: number, text: string): string {
  const data = { node, rank: node, text, offset };
  return `id: ${node}:${offset}\ndata: ${JSON.stringify(data)}\n\n`;
}

describe('KaleService.streamLogs', () => {
  const service = new KaleService(SETTINGS);
  const server = fakeServer();
  const { respond, call } = server;

  it('delivers the lines of each chunk until the end event', async () => {
    const all = event(0, 10, 'a') + event(1, 5, 'b') + event(0, 20, 'c');
    respond(
      stream([
        all.slice(0, 30),
        all.slice(30),
        'event: end\ndata: {"status": "Complete"}\n\n'
      ])
    );
    const batches: Kale.ILogLine[][] = [];
    const status = await service.streamLogs('job-1', {
      onLines: lines => batches.push(lines)
    });
    expect(status).toEqual({ status: 'Complete', reason: null });
    expect(
      ([] as Kale.ILogLine[])
        .concat(...batches)
        .map(l => [l.node, l.rank, l.text, l.offset])
    ).toEqual([
      [0, 0, 'a', 10],
      [1, 1, 'b', 5],
      [0, 0, 'c', 20]
    ]);
    expect(call().url).toBe(`${BASE}/jobs/job-1/logs?follow=1`);
    expect(call().init.headers).toEqual({ Accept: 'text/event-stream' });
  });

  it('reconnects where every node stopped: no line twice, none lost', async () => {
    respond(
      stream([event(0, 10, 'a') + event(1, 5, 'b') + event(0, 20, 'c')]), // drops
      stream([
        event(1, 9, 'd') +
          'event: end\ndata: {"status": "Failed", "reason": "node 1 exited with code 1"}\n\n'
      ])
    );
    const texts: string[] = [];
    const states: string[] = [];
    const status = await service.streamLogs('job-1', {
      node: undefined,
      onLines: lines => texts.push(...lines.map(l => l.text)),
      onState: state => states.push(state),
      retryDelay: () => 0
    });
    expect(status).toEqual({
      status: 'Failed',
      reason: 'node 1 exited with code 1'
    });
    expect(texts).toEqual(['a', 'b', 'c', 'd']);
    expect(states).toEqual(['open', 'reconnecting', 'open']);
    const again = call(1);
    expect(again.url).toBe(
      `${BASE}/jobs/job-1/logs?follow=1&offsets=0%3A20%2C1%3A5`
    );
    expect(again.init.headers).toEqual({
      Accept: 'text/event-stream',
      'Last-Event-ID': '0:20'
    });
  });

  it('retries a failed connection, then asks for one node and a tail', async () => {
    server
      .requests()
      .mockRejectedValueOnce(new TypeError('Failed to fetch'))
      .mockResolvedValueOnce(
        stream(['event: end\ndata: {"status": "Complete"}\n\n'])
      );
    const status = await service.streamLogs('job-1', {
      node: 1,
      tail: 100,
      follow: false,
      onLines: () => undefined,
      retryDelay: () => 0
    });
    expect(status).toEqual({ status: 'Complete', reason: null });
    expect(server.requests()).toHaveBeenCalledTimes(2);
    expect(call(1).url).toBe(
      `${BASE}/jobs/job-1/logs?follow=0&node=1&tail=100`
    );
  });

  it('throws when the server refuses (no retry)', async () => {
    respond(json({ message: 'job x does not exist' }, 404));
    const error = await service
      .streamLogs('x', { onLines: () => undefined })
      .catch(e => e);
    expect(error).toBeInstanceOf(KaleAPIError);
    expect(error.message).toBe('job x does not exist');
    expect(server.requests()).toHaveBeenCalledTimes(1);
  });

  it('stops at an error event', async () => {
    respond(
      stream(['event: error\ndata: {"message": "pod gone", "status": 404}\n\n'])
    );
    await expect(
      service.streamLogs('x', { onLines: () => undefined })
    ).rejects.toEqual(new LogStreamError('pod gone'));
  });

  it('resolves null when aborted', async () => {
    const abort = new AbortController();
    server.requests().mockImplementation(async () => {
      abort.abort();
      throw new DOMException('aborted', 'AbortError');
    });
    await expect(
      service.streamLogs('x', {
        onLines: () => undefined,
        signal: abort.signal
      })
    ).resolves.toBeNull();
  });
});
