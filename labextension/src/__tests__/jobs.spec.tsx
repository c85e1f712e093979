import type { Widget } from '@lumino/widgets';
import * as React from 'react';

import { JobsList, IJobsProps } from '../panel/jobs/jobs';
import { DEFAULT_VIEW } from '../panel/jobs/jobs-view';
import type { Kale } from '../types';
import { jobsListProps } from './fakes';
import { render } from './render';

const NOW = Date.parse('2026-01-01T01:00:00Z');

function job(name: string, extra: Partial<Kale.IJobInfo> = {}): Kale.IJobInfo {
  return {
    name,
    status: 'Complete',
    backend: 'local',
    runtime: 'torch-distributed',
    num_nodes: 2,
    procs_per_node: 1,
    nodes: [],
    created: '2026-01-01T00:00:00Z',
    finished: '2026-01-01T00:02:05Z',
    provenance: {
      'kale-ext.io/notebook': 'a/nb.ipynb',
      'kale-ext.io/options': '{"parameters": {"epochs": "6"}}'
    },
    ...extra
  };
}

function list(props: Partial<IJobsProps>): Promise<Widget> {
  return render(<JobsList {...jobsListProps({ now: NOW, ...props })} />);
}

describe('JobsList', () => {
  let widget: Widget | undefined;
  afterEach(() => widget?.dispose());

  it('shows a job whose other nodes are being stopped as failing, in red', async () => {
    const failing = 'node 1 exited with code 1';
    widget = await list({
      jobs: [
        job('nb-failing', {
          status: 'Running',
          finished: null,
          failing,
          status_text: `Failing (${failing})`
        }),
        job('nb-running', { status: 'Running', finished: null })
      ]
    });
    const badge = (name: string) =>
      widget!.node.querySelector(`[data-job="${name}"] .kale-ext-Status`)!;
    expect(badge('nb-failing').textContent).toBe(`Failing (${failing})`);
    expect(badge('nb-failing').classList).toContain('kale-ext-Status-failed');
    expect(badge('nb-running').classList).toContain('kale-ext-Status-running');
  });

  it('says where a job’s processes per node come from', async () => {
    const why = "the runtime's choice: 4 CPUs per node";
    widget = await list({
      jobs: [job('nb-four', { procs_per_node: 4, procs_why: why })]
    });
    const meta = widget.node.querySelector(
      '[data-job="nb-four"] .kale-ext-JobRow-meta'
    )!;
    expect(meta.textContent).toContain('2 × 4 nodes');
    expect(meta.getAttribute('title')).toBe(`4 processes per node: ${why}`);
  });

  it('shows each job’s state, parameters, duration and final metric', async () => {
    widget = await list({
      jobs: [job('nb-six')],
      metrics: () => new Map([['accuracy', { value: 0.9712, step: 6 }]])
    });
    const row = widget.node.querySelector('[data-job="nb-six"]')!;
    const cell = (c: string) =>
      row.querySelector(`.kale-ext-JobCol-${c}`)?.textContent;
    expect(cell('state')).toBe('Complete');
    expect(cell('parameters')).toBe('epochs=6');
    expect(cell('duration')).toBe('2m 05s');
    expect(cell('metric')).toBe('0.9712 step 6');
    expect(
      [...widget.node.querySelectorAll('[role="columnheader"]')].map(
        h => h.textContent
      )
    ).toEqual([
      'State',
      'Name',
      'Parameters',
      'Duration',
      'accuracy',
      'Started ▾'
    ]);
  });

  it('sorts by a column when its header is pressed, and filters by notebook', async () => {
    const onView = jest.fn();
    widget = await list({ jobs: [job('nb-six')], onView });
    const header = widget.node.querySelector<HTMLElement>(
      '[aria-label="Sort by Duration"]'
    )!;
    header.click();
    expect(onView).toHaveBeenLastCalledWith({
      sort: 'duration',
      descending: false
    });
    const all = [
      ...widget.node.querySelectorAll<HTMLElement>('[role="radio"]')
    ];
    expect(
      all.map(b => [b.textContent, b.getAttribute('aria-checked')])
    ).toEqual([
      ['This notebook 1', 'true'],
      ['All 1', 'false']
    ]);
    all[1].click();
    expect(onView).toHaveBeenLastCalledWith({ filter: 'all' });
  });

  it("counts each choice's jobs: the section counts all, this notebook shows fewer", async () => {
    const other = { 'kale-ext.io/notebook': 'b/other.ipynb' };
    widget = await list({
      jobs: [
        job('nb-one'),
        job('other-one', { provenance: other }),
        job('nb-two'),
        job('unknown', { provenance: {} })
      ]
    });
    const choices = [
      ...widget.node.querySelectorAll<HTMLElement>('[role="radio"]')
    ].map(b => b.textContent);
    expect(choices).toEqual(['This notebook 2', 'All 4']);
    const rows = widget.node.querySelectorAll('[data-job]');
    expect([...rows].map(r => r.getAttribute('data-job')).sort()).toEqual([
      'nb-one',
      'nb-two'
    ]);
  });

  it('counts nothing where there is no notebook to choose', async () => {
    widget = await list({ jobs: [job('nb-one')], notebook: null });
    const choices = [
      ...widget.node.querySelectorAll<HTMLElement>('[role="radio"]')
    ].map(b => b.textContent);
    expect(choices).toEqual(['This notebook', 'All']);
  });

  it('says a failed job’s failure and links to the cell it failed in', async () => {
    const onOpenFailure = jest.fn();
    const failed = job('nb-bad', {
      status: 'Failed',
      failure: {
        summary:
          'node 1, rank 1: cell 4 ("training"), line 3: KeyError: \'label\'',
        cell_index: 3,
        line: 3
      }
    });
    widget = await list({ jobs: [failed], onOpenFailure });
    const reason = widget.node.querySelector('.kale-ext-JobRow-reason')!;
    expect(reason.textContent).toContain("KeyError: 'label'");
    const open = reason.querySelector('button')!;
    expect(open.textContent).toBe('Open cell 4, line 3');
    open.click();
    expect(onOpenFailure).toHaveBeenCalledWith(failed);
  });

  it('says when this notebook has no jobs but others do', async () => {
    widget = await list({
      jobs: [
        job('x', {
          provenance: { 'kale-ext.io/notebook': 'b/other.ipynb' }
        })
      ]
    });
    expect(widget.node.textContent).toContain(
      'No jobs of this notebook yet (1 of others: show all).'
    );
  });
});

describe('JobsList in a narrow panel, with many jobs', () => {
  let widget: Widget | undefined;
  afterEach(() => widget?.dispose());

  it('keeps the part of a name that tells it apart in a tail that does not give way', async () => {
    widget = await list({
      jobs: [job('mnist-train-a1b2c'), job('mnist-train-x9y8z'), job('cifar')]
    });
    const name = (n: string) =>
      widget!.node.querySelector(`[data-job="${n}"] .kale-ext-JobRow-name`)!;
    expect(name('mnist-train-a1b2c').getAttribute('title')).toBe(
      'mnist-train-a1b2c'
    );
    expect(name('mnist-train-a1b2c').textContent).toBe('mnist-train-a1b2c');
    expect(
      name('mnist-train-a1b2c').querySelector('.kale-ext-JobName-tail')!
        .textContent
    ).toBe('-a1b2c');
    expect(
      name('mnist-train-a1b2c').querySelector('.kale-ext-JobName-head')!
        .textContent
    ).toBe('mnist-train');
    expect(name('cifar').querySelector('.kale-ext-JobName-head')).toBeNull();
  });

  it('writes every time as how long ago, with the time itself on hover', async () => {
    widget = await list({
      jobs: [
        job('nb-stopped', {
          status: 'Failed',
          status_text: 'Stopped',
          created: '2026-01-01T00:57:00Z',
          reason: 'stopped by ann at 2026-01-01T00:59:20Z'
        })
      ]
    });
    const row = widget.node.querySelector('[data-job="nb-stopped"]')!;
    const started = row.querySelector('.kale-ext-JobCol-created time')!;
    expect(started.textContent).toBe('3 min ago');
    expect(started.getAttribute('dateTime')).toBe('2026-01-01T00:57:00Z');
    expect(started.getAttribute('title')).toBe(
      `Started ${new Date('2026-01-01T00:57:00Z').toLocaleString()} (2026-01-01T00:57:00Z)`
    );
    const reason = row.querySelector('.kale-ext-JobRow-reason')!;
    expect(reason.textContent).toBe('stopped by ann at 40 s ago');
    expect(reason.querySelector('time')!.getAttribute('title')).toContain(
      '(2026-01-01T00:59:20Z)'
    );
  });

  it('names the notebook each job came from where all jobs are listed', async () => {
    const jobs = [
      job('nb-here'),
      job('nb-there', {
        provenance: { 'kale-ext.io/notebook': 'deep/path/other.ipynb' }
      })
    ];
    widget = await list({ jobs, view: { ...DEFAULT_VIEW, filter: 'all' } });
    const from = (n: string) =>
      widget!.node.querySelector(`[data-job="${n}"] .kale-ext-JobRow-notebook`);
    expect(from('nb-there')!.textContent).toBe('other.ipynb');
    expect(from('nb-there')!.getAttribute('title')).toBe(
      'deep/path/other.ipynb'
    );
    expect(from('nb-here')!.textContent).toBe('nb.ipynb');
    widget.dispose();
    widget = await list({ jobs }); // this notebook's: no need to say
    expect(from('nb-here')).toBeNull();
  });

  it('filters by state and name, says how many it shows, and clears the filters', async () => {
    const onView = jest.fn();
    const jobs = [
      job('nb-one'),
      job('nb-two', { status: 'Failed' }),
      job('nb-three', { status: 'Running', finished: null })
    ];
    widget = await list({ jobs, onView });
    const state = widget.node.querySelector<HTMLSelectElement>(
      'select[aria-label="Filter by state"]'
    )!;
    expect([...state.options].map(o => o.textContent)).toEqual([
      'Any state',
      'Created',
      'Queued',
      'Running',
      'Complete',
      'Failed',
      'Unreadable',
      'Stalled',
      'Stopped'
    ]);
    expect(widget.node.querySelector('.kale-ext-JobsShown')).toBeNull();
    widget.dispose();

    widget = await list({
      jobs,
      onView,
      view: { ...DEFAULT_VIEW, status: 'failed', query: 'TWO' }
    });
    const rows = () =>
      [...widget!.node.querySelectorAll('.kale-ext-JobRow')].map(r =>
        r.getAttribute('data-job')
      );
    expect(rows()).toEqual(['nb-two']);
    const shown = widget.node.querySelector('.kale-ext-JobsShown')!;
    expect(shown.textContent).toBe('1 of 3 shown Clear filters');
    shown.querySelector('button')!.click();
    expect(onView).toHaveBeenLastCalledWith({ status: null, query: '' });
    widget.dispose();

    widget = await list({
      jobs,
      onView,
      view: { ...DEFAULT_VIEW, query: 'nothing' }
    });
    expect(rows()).toEqual([]);
    expect(widget.node.textContent).toContain('0 of 3 shown');
    expect(widget.node.textContent).not.toContain('No jobs');
  });

  it('sorts from one line where the headers do not fit', async () => {
    const onView = jest.fn();
    widget = await list({ jobs: [job('nb-six')], onView });
    const sort = widget.node.querySelector<HTMLSelectElement>(
      '.kale-ext-JobSort select'
    )!;
    expect(sort.value).toBe('created');
    sort.value = 'name';
    sort.dispatchEvent(new Event('change', { bubbles: true }));
    expect(onView).toHaveBeenLastCalledWith({
      sort: 'name',
      descending: false
    });
    widget.node.querySelector<HTMLElement>('.kale-ext-JobSort button')!.click();
    expect(onView).toHaveBeenLastCalledWith({ descending: false });
  });

  it('shows a running job’s latest metric, and says it is the latest', async () => {
    widget = await list({
      jobs: [job('nb-run', { status: 'Running', finished: null })],
      metrics: () => new Map([['loss', { value: 0.25, step: 3 }]])
    });
    const cell = widget.node.querySelector(
      '[data-job="nb-run"] .kale-ext-JobCol-metric'
    )!;
    expect(cell.textContent).toBe('0.25 step 3');
    expect(cell.getAttribute('title')).toBe('loss (latest)');
  });
});

describe('JobsList row actions', () => {
  let widget: Widget | undefined;
  afterEach(() => widget?.dispose());

  it('offers Stop on a running job only, and says at the row what went wrong', async () => {
    const onStop = jest.fn();
    const onRerun = jest.fn();
    widget = await list({
      jobs: [
        job('nb-run', { status: 'Running', finished: null }),
        job('nb-done')
      ],
      onStop,
      onRerun,
      onEditRerun: jest.fn(),
      rowMessage: name =>
        name === 'nb-done'
          ? { kind: 'error', text: 'job nb-done cannot be rerun from here' }
          : undefined
    });
    const button = (label: string) =>
      widget!.node.querySelector<HTMLButtonElement>(`[aria-label="${label}"]`);
    expect(button('Stop nb-done')).toBeNull();
    button('Stop nb-run')!.click();
    expect(onStop).toHaveBeenCalledWith('nb-run');
    button('Rerun nb-done')!.click();
    expect(onRerun).toHaveBeenCalledWith('nb-done');
    expect(button('Edit and rerun nb-done')).not.toBeNull();
    const alert = widget.node.querySelector(
      '[data-job="nb-done"] [role="alert"]'
    );
    expect(alert?.textContent).toContain(
      'job nb-done cannot be rerun from here'
    );
    expect(
      widget.node.querySelector('[data-job="nb-run"] [role="alert"]')
    ).toBeNull();
  });

  it('offers Resume on a failed or stopped job only', async () => {
    const onResume = jest.fn();
    widget = await list({
      jobs: [
        job('nb-failed', { status: 'Failed' }),
        job('nb-stopped', { status: 'Failed', status_text: 'Stopped' }),
        job('nb-done'),
        job('nb-run', { status: 'Running', finished: null })
      ],
      onResume
    });
    const button = (label: string) =>
      widget!.node.querySelector<HTMLButtonElement>(`[aria-label="${label}"]`);
    expect(button('Resume nb-done')).toBeNull();
    expect(button('Resume nb-run')).toBeNull();
    button('Resume nb-failed')!.click();
    button('Resume nb-stopped')!.click();
    expect(onResume.mock.calls).toEqual([['nb-failed'], ['nb-stopped']]);
  });
});

describe('JobsList lineage', () => {
  let widget: Widget | undefined;
  afterEach(() => widget?.dispose());

  it("names a resumed job's parent and a running job's last checkpoint", async () => {
    widget = await list({
      jobs: [
        job('nb-third', {
          status: 'Running',
          finished: null,
          parent: 'nb-second',
          lineage: 'nb-first',
          resume_step: 12,
          checkpoint: { step: 14, time: '2026-01-01T00:57:00Z', exact: true }
        }),
        job('nb-second', {
          parent: 'nb-first',
          lineage: 'nb-first',
          resume_step: null,
          checkpoint: { step: 12, time: '2026-01-01T00:30:00Z', exact: false }
        }),
        job('nb-first', { lineage: 'nb-first', parent: null })
      ]
    });
    const meta = (name: string) =>
      widget!.node.querySelector(`[data-job="${name}"] .kale-ext-JobRow-meta`)!
        .textContent;
    expect(meta('nb-third')).toBe(
      'torch-distributed · 2 nodes · resumed from nb-second (lineage nb-first), step 12' +
        ' · checkpoint: step 14, 3 min ago'
    );
    // ended: no checkpoint shown; no step reported: none said
    expect(meta('nb-second')).toBe(
      'torch-distributed · 2 nodes · resumed from nb-first'
    );
    expect(meta('nb-first')).toBe('torch-distributed · 2 nodes');
  });
});
