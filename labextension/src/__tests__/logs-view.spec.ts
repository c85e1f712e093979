import { Widget } from '@lumino/widgets';

import type { ILogEnd, IStreamLogsOptions, KaleService } from '../api';
import { LogBuffer } from '../logs/buffer';
import { LogsView } from '../logs/widget';
import { JobTimelines } from '../timeline';
import type { Kale } from '../types';
import { until } from './helpers';

function info(status: Kale.JobStatus, state: string): Kale.IJobInfo {
  return {
    name: 'job-1',
    status,
    backend: 'local',
    runtime: 'torch-distributed',
    num_nodes: 2,
    procs_per_node: 1,
    nodes: [0, 1].map(index => ({ index, state })),
    created: null,
    finished: null
  };
}

describe('LogsView with metrics and a timeline', () => {
  beforeAll(() => {
    (globalThis as { ResizeObserver?: unknown }).ResizeObserver ??= class {
      observe(): void {}
      disconnect(): void {}
    };
  });

  it('plots the metrics lines, hides them from the log, shows the phases', async () => {
    const lines: Kale.ILogLine[] = [
      { node: 0, rank: 0, text: '[rank 0] epoch 1/2 loss 0.900', offset: 1 },
      {
        node: 0,
        rank: 0,
        text: 'KALE_METRIC {"step": 1, "rank": 0, "loss": 0.9}',
        offset: 2
      },
      {
        node: 1,
        rank: 1,
        text: 'KALE_METRIC {"step": 1, "rank": 1, "loss": 0.95}',
        offset: 1
      },
      {
        node: 1,
        rank: 1,
        text: 'KALE_METRIC {"step": 2, "rank": 1, "loss": 0.5}',
        offset: 2
      },
      {
        node: 0,
        rank: 0,
        text: 'KALE_METRIC {"step": 2, "rank": 0, "loss": 0.4, "accuracy": 0.97}',
        offset: 3
      }
    ];
    let finish: (end: ILogEnd) => void = () => undefined;
    const statuses = [
      info('Running', 'Running'),
      info('Complete', 'Succeeded')
    ];
    const service = {
      streamLogs: (name: string, options: IStreamLogsOptions) => {
        options.onState?.('open');
        options.onLines(lines);
        return new Promise<ILogEnd>(resolve => (finish = resolve));
      },
      getJob: jest.fn(
        async () => statuses.shift() ?? info('Complete', 'Succeeded')
      )
    } as unknown as KaleService;
    const timelines = new JobTimelines();
    const view = new LogsView({
      service,
      name: 'job-1',
      buffer: new LogBuffer({ schedule: flush => setTimeout(flush, 0) }),
      timelines,
      statusInterval: 20
    });
    Widget.attach(view, document.body);
    try {
      const loss = await until(() =>
        view.node.querySelector('[data-metric="loss"]')
      );
      const chart = loss.querySelector('svg[role="img"]')!;
      await until(() =>
        chart.getAttribute('aria-label')?.includes('rank 1') ? chart : null
      );
      expect(chart.getAttribute('aria-label')).toBe(
        'loss, latest: rank 0 0.4 at step 2, rank 1 0.5 at step 2'
      );
      expect(
        [...loss.querySelectorAll('.kale-ext-Metric-series')].map(g =>
          g.getAttribute('data-rank')
        )
      ).toEqual(['0', '1', 'mean']);
      // a line per rank and their mean
      expect(loss.querySelectorAll('path')).toHaveLength(3);
      // reported once: a number, not a chart
      const accuracy = view.node.querySelector('[data-metric="accuracy"]')!;
      expect(accuracy.querySelector('svg')).toBeNull();
      expect(accuracy.textContent).toContain('0.97 at step 2');

      // The log shows the one plain line; the toggle shows the others.
      const log = view.node.querySelector('[role="log"]')!;
      await until(() =>
        log.querySelectorAll('.kale-ext-LogLine').length > 0 ? log : null
      );
      expect(view.buffer.total).toBe(5);
      expect(view.buffer.size).toBe(1);
      await until(() =>
        view.node.querySelector('.kale-ext-LogsStatus')?.textContent ===
        'Streaming · 1 lines'
          ? log
          : null
      );
      const toggle = await until(() =>
        [...view.node.querySelectorAll('button')].find(
          b => b.textContent === 'Metric lines (4)'
        )
      );
      expect(toggle.getAttribute('aria-pressed')).toBe('false');
      toggle.click();
      await until(() =>
        log.querySelectorAll('.kale-ext-LogLine').length === 5 ? log : null
      );
      expect(toggle.getAttribute('aria-pressed')).toBe('true');
      expect(view.node.querySelector('.kale-ext-LogsStatus')!.textContent).toBe(
        'Streaming · 5 lines'
      );

      // The timeline: polled until the job ends, then no more.
      const bar = await until(() =>
        view.node.querySelector('[data-node="1"] [role="img"]')
      );
      finish({ status: 'Complete', reason: null } as ILogEnd);
      await until(() => timelines.get('job-1')?.final);
      await until(() =>
        bar.getAttribute('aria-label')?.endsWith('done') ? bar : null
      );
      expect(bar.getAttribute('aria-label')).toMatch(
        /^node 1: running [\d.]+s, done$/
      );
      // Once the job has ended its status is asked no more.
      const calls = (service.getJob as jest.Mock).mock.calls.length;
      await until(() => !view.pollingStatus);
      expect((service.getJob as jest.Mock).mock.calls.length).toBe(calls);
      expect(view.statusNote).toBe('');
    } finally {
      Widget.detach(view);
      view.dispose();
    }
  });
});
