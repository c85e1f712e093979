import type { Widget } from '@lumino/widgets';
import * as React from 'react';

import { JobsList, IJobsProps } from '../panel/jobs/jobs';
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
      ['This notebook', 'true'],
      ['All', 'false']
    ]);
    all[1].click();
    expect(onView).toHaveBeenLastCalledWith({ filter: 'all' });
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
        ' · checkpoint: step 14, 3m ago'
    );
    // ended: no checkpoint shown; no step reported: none said
    expect(meta('nb-second')).toBe(
      'torch-distributed · 2 nodes · resumed from nb-first'
    );
    expect(meta('nb-first')).toBe('torch-distributed · 2 nodes');
  });
});
