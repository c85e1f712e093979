import { Widget } from '@lumino/widgets';
import * as React from 'react';

import type { ILogEnd, KaleService } from '../api';
import { LogBuffer } from '../logs/buffer';
import { LogsView } from '../logs/widget';
import { JobsList } from '../panel/jobs/jobs';
import { ProgressBar } from '../progress/bar';
import { JobTimelines } from '../timeline';
import type { Kale } from '../types';
import { jobInfo, jobsListProps } from './fakes';
import { until } from './helpers';
import { inAct, render } from './render';

const NOW = Date.parse('2026-01-01T00:10:00Z');

function job(
  status: Kale.JobStatus,
  progress: Partial<Kale.IProgress> | null = {}
): Kale.IJobInfo {
  return jobInfo(
    'nb-run',
    { 'kale-ext.io/notebook': 'a/nb.ipynb' },
    {
      status,
      finished: null,
      progress: progress && {
        percent: 38.4,
        step: 384,
        total: 1000,
        unit: 'step',
        eta_seconds: 720,
        source: 'tqdm',
        updated: '2026-01-01T00:09:55Z',
        ...progress
      }
    }
  );
}

describe('ProgressBar', () => {
  let widget: Widget | undefined;
  afterEach(() => widget?.dispose());

  it('is a progressbar screen readers read, with where it came from on hover', async () => {
    widget = await render(<ProgressBar job={job('Running')} now={NOW} />);
    const bar = widget.node.querySelector('[role="progressbar"]')!;
    expect(bar.getAttribute('aria-valuenow')).toBe('38');
    expect(bar.getAttribute('aria-valuemin')).toBe('0');
    expect(bar.getAttribute('aria-valuemax')).toBe('100');
    expect(bar.getAttribute('aria-valuetext')).toBe('38 % · about 12 min left');
    expect(bar.getAttribute('aria-label')).toBe('Progress of nb-run');
    expect(bar.getAttribute('title')).toMatch(
      /^Progress from a tqdm bar on rank 0 · step 384 of 1,000 · /
    );
    expect(bar.textContent).toBe('38 % · about 12 min left');
    expect(
      bar.querySelector<HTMLElement>('.kale-ext-Progress-fill')!.style.width
    ).toBe('38.4%');
  });
});

describe('A job row’s progress', () => {
  let widget: Widget | undefined;
  afterEach(() => widget?.dispose());

  it('shows a bar while the job runs, and its state, not a stale bar, once it ends', async () => {
    let setJobs: (jobs: Kale.IJobInfo[]) => void = () => undefined;
    function Live(): JSX.Element {
      const [jobs, set] = React.useState([job('Queued', null)]);
      setJobs = set;
      return <JobsList {...jobsListProps({ jobs, now: NOW })} />;
    }
    widget = await render(<Live />);
    const row = () => widget!.node.querySelector('[data-job="nb-run"]')!;
    const bar = () => row().querySelector('[role="progressbar"]');
    const state = () => row().querySelector('.kale-ext-JobCol-state')!;
    expect(state().textContent).toBe('Queued');
    expect(bar()).toBeNull();

    await inAct(() =>
      setJobs([job('Running', { eta_seconds: null, percent: 3 })])
    );
    expect(bar()?.textContent).toBe('3 %');

    await inAct(() => setJobs([job('Running')]));
    expect(bar()?.getAttribute('aria-valuenow')).toBe('38');
    expect(bar()?.textContent).toBe('38 % · about 12 min left');

    // ended: its last progress is still in the data, not on the row
    await inAct(() =>
      setJobs([job('Complete', { percent: 100, eta_seconds: 0 })])
    );
    expect(bar()).toBeNull();
    expect(state().textContent).toBe('Complete');
  });
});

describe('The logs view’s progress', () => {
  it('follows the job’s polled status in the header, and goes when the job ends', async () => {
    const statuses = [
      job('Running', { percent: 10, eta_seconds: null }),
      job('Running', { percent: 55, eta_seconds: 90 }),
      job('Complete', { percent: 100, eta_seconds: 0 })
    ];
    let finish: (end: ILogEnd) => void = () => undefined;
    const service = {
      streamLogs: () => new Promise<ILogEnd>(resolve => (finish = resolve)),
      getJob: jest.fn(async () => statuses[0])
    } as unknown as KaleService;
    const view = new LogsView({
      service,
      name: 'nb-run',
      buffer: new LogBuffer({ schedule: flush => setTimeout(flush, 0) }),
      timelines: new JobTimelines(),
      statusInterval: 20
    });
    Widget.attach(view, document.body);
    const bar = () =>
      view.node.querySelector('.kale-ext-LogsProgress[role="progressbar"]');
    try {
      await until(() => bar()?.getAttribute('aria-valuetext') === '10 %');
      statuses.shift();
      await until(
        () =>
          bar()?.getAttribute('aria-valuetext') === '55 % · about 2 min left'
      );
      statuses.shift();
      finish({ status: 'Complete', reason: null } as ILogEnd);
      await until(() => view.timelines.get('nb-run')?.final);
      await until(() => bar() === null);
    } finally {
      Widget.detach(view);
      view.dispose();
    }
  });
});
