import type { IStreamLogsOptions, KaleService } from '../api';
import { FinalMetricsCache } from '../panel/jobs/job-metrics';
import type { Kale } from '../types';
import { until } from './helpers';

function job(name: string, status: Kale.JobStatus): Kale.IJobInfo {
  return { name, status } as Kale.IJobInfo;
}

function line(node: number, text: string): Kale.ILogLine {
  return { node, rank: node, text, offset: 1 };
}

describe('FinalMetricsCache', () => {
  it('reads the end of each ended job’s log once, one job at a time', async () => {
    let reading = 0;
    let most = 0;
    const streamLogs = jest.fn(
      async (name: string, options: IStreamLogsOptions) => {
        most = Math.max(most, ++reading);
        await Promise.resolve();
        options.onLines([
          line(1, 'KALE_METRIC {"step": 6, "rank": 1, "accuracy": 0.5}'),
          line(0, 'KALE_METRIC {"step": 5, "rank": 0, "loss": 0.3}'),
          line(0, `KALE_METRIC {"step": 6, "rank": 0, "accuracy": 0.9}`),
          line(0, 'test accuracy 0.9')
        ]);
        reading--;
        return { status: 'Complete', reason: null };
      }
    );
    const changed = jest.fn();
    const cache = new FinalMetricsCache({
      service: { streamLogs } as unknown as KaleService,
      changed
    });
    const jobs = [
      job('a', 'Complete'),
      job('b', 'Failed'),
      job('c', 'Running')
    ];
    cache.want(jobs);
    cache.want(jobs); // asked again while reading: nothing more
    await until(() => changed.mock.calls.length === 2);
    expect(streamLogs.mock.calls.map(c => c[0])).toEqual(['a', 'b']);
    expect(streamLogs.mock.calls[0][1]).toMatchObject({
      follow: false,
      tail: 200
    });
    expect(most).toBe(1);
    // rank 0's last values
    expect(cache.get('a')).toEqual(
      new Map([
        ['accuracy', { value: 0.9, step: 6 }],
        ['loss', { value: 0.3, step: 5 }]
      ])
    );
    expect(cache.get('c')).toBeUndefined(); // running: not final

    cache.want(jobs); // read already: not again
    await Promise.resolve();
    expect(streamLogs).toHaveBeenCalledTimes(2);
    cache.dispose();
  });

  it('never reads a job deleted meanwhile, and stops its running read', async () => {
    const signals: AbortSignal[] = [];
    const streamLogs = jest.fn(
      (name: string, options: IStreamLogsOptions) =>
        new Promise<null>(resolve => {
          signals.push(options.signal!);
          options.signal!.addEventListener('abort', () => resolve(null));
        })
    );
    const changed = jest.fn();
    const cache = new FinalMetricsCache({
      service: { streamLogs } as unknown as KaleService,
      changed
    });
    cache.want([job('a', 'Complete'), job('b', 'Complete')]);
    expect(streamLogs.mock.calls.map(c => c[0])).toEqual(['a']);
    await cache.forget('b'); // deleted while waiting in line
    let forgotten = false;
    const forgetting = cache.forget('a').then(() => (forgotten = true));
    expect(signals[0].aborted).toBe(true); // deleted while read
    await forgetting; // once its read has stopped: no request on its way
    expect(forgotten).toBe(true);
    // a list asked for before the deletes still holds them: not read
    cache.want([job('a', 'Complete'), job('b', 'Complete')]);
    await Promise.resolve();
    expect(streamLogs.mock.calls.map(c => c[0])).toEqual(['a']);
    expect(cache.get('a')).toBeUndefined();
    cache.dispose();
  });

  it('remembers a job whose log cannot be read as having no metrics', async () => {
    const streamLogs = jest.fn().mockRejectedValue(new Error('gone'));
    const changed = jest.fn();
    const cache = new FinalMetricsCache({
      service: { streamLogs } as unknown as KaleService,
      changed
    });
    cache.want([job('gone', 'Complete')]);
    await until(() => changed.mock.calls.length === 1);
    expect(cache.get('gone')).toEqual(new Map());
    cache.dispose();
  });
});
