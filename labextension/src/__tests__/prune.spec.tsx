import type { Widget } from '@lumino/widgets';
import * as React from 'react';

import { JobsList } from '../panel/jobs/jobs';
import { hideOlder, PruneControls } from '../panel/jobs/prune';
import type { Kale } from '../types';
import { jobsListProps } from './fakes';
import { until } from './helpers';
import { inAct, render } from './render';

const NOW = Date.parse('2026-01-10T00:00:00Z');
const DAY = 86400;

function job(
  name: string,
  status: Kale.JobStatus,
  finished: string | null
): Kale.IJobInfo {
  return {
    name,
    status,
    backend: 'local',
    runtime: 'torch-distributed',
    num_nodes: 1,
    procs_per_node: 1,
    nodes: [],
    created: '2026-01-01T00:00:00Z',
    finished,
    provenance: { 'kale-ext.io/notebook': 'a/nb.ipynb' } // the listed notebook's
  };
}

const OLD: Kale.IPruned = {
  name: 'old-one',
  status: 'Complete',
  age_seconds: 8 * DAY,
  disk_bytes: 2048,
  disk_partial: false,
  deleted: false,
  note: null
};

function select(node: HTMLElement, label: string): HTMLSelectElement {
  const found = [...node.querySelectorAll('label')].find(
    l => l.textContent === label
  )!;
  return node.querySelector<HTMLSelectElement>(
    `#${CSS.escape(found.htmlFor)}`
  )!;
}

function button(node: HTMLElement, text: RegExp): HTMLButtonElement {
  return [...node.querySelectorAll('button')].find(b =>
    text.test(b.textContent ?? '')
  )!;
}

describe('hideOlder', () => {
  it('hides finished jobs past the age, never an unfinished one', () => {
    const jobs = [
      job('old', 'Complete', '2026-01-01T00:00:00Z'),
      job('old-failed', 'Failed', '2026-01-02T00:00:00Z'),
      job('recent', 'Complete', '2026-01-09T12:00:00Z'),
      job('running', 'Running', null),
      job('queued', 'Queued', null)
    ];
    const names = (s: number | null) =>
      hideOlder(jobs, s, NOW).map(j => j.name);
    expect(names(null)).toEqual(jobs.map(j => j.name));
    expect(names(7 * DAY)).toEqual(['recent', 'running', 'queued']);
    expect(names(9 * DAY)).toEqual([
      'old-failed',
      'recent',
      'running',
      'queued'
    ]);
  });
});

describe('PruneControls', () => {
  let widget: Widget | undefined;
  afterEach(() => widget?.dispose());

  it('lists what would go, prunes only when confirmed, then lists again', async () => {
    const prune = jest.fn(async (body: Kale.IPruneBody) => ({
      dry_run: !!body.dry_run,
      jobs: [
        { ...OLD, deleted: !body.dry_run, note: body.dry_run ? null : 'kept' }
      ]
    }));
    const onPruned = jest.fn();
    widget = await render(
      <PruneControls
        hide={null}
        onHide={() => undefined}
        prune={prune}
        onPruned={onPruned}
      />
    );
    const node = widget.node;
    await inAct(() => button(node, /Prune finished/).click());
    const dialog = await until(() => node.querySelector('[role="dialog"] li'));
    expect(prune).toHaveBeenCalledWith({ older_than: '7d', dry_run: true });
    expect(dialog.textContent).toBe('old-one · Complete · 8d ago · 2 KiB');
    expect(onPruned).not.toHaveBeenCalled();

    const age = select(node, 'Finished more than');
    await inAct(() => {
      age.value = '30d';
      age.dispatchEvent(new Event('change', { bubbles: true }));
    });
    await until(() => prune.mock.calls.length === 2);
    expect(prune).toHaveBeenLastCalledWith({
      older_than: '30d',
      dry_run: true
    });

    await until(() => button(node, /^Prune 1 job$/));
    await inAct(() => button(node, /^Prune 1 job$/).click());
    const said = await until(() => node.querySelector('[role="status"]'));
    expect(prune).toHaveBeenLastCalledWith({ older_than: '30d' });
    expect(said.textContent).toBe('Removed 1 job; outputs kept.');
    expect(onPruned).toHaveBeenCalledTimes(1);
    expect(node.querySelector('[role="dialog"]')).toBeNull();
  });

  it("cancels without pruning, and says the server's reason", async () => {
    const prune = jest.fn(async () => ({ dry_run: true, jobs: [OLD] }));
    widget = await render(
      <PruneControls hide={null} onHide={() => undefined} prune={prune} />
    );
    const node = widget.node;
    await inAct(() => button(node, /Prune finished/).click());
    await until(() => node.querySelector('[role="dialog"] li'));
    await inAct(() => button(node, /^Cancel$/).click());
    expect(node.querySelector('[role="dialog"]')).toBeNull();
    expect(prune).toHaveBeenCalledTimes(1);

    prune.mockRejectedValueOnce(new Error('older_than: must match'));
    await inAct(() => button(node, /Prune finished/).click());
    const alert = await until(() => node.querySelector('[role="alert"]'));
    expect(alert.textContent).toBe('Could not prune: older_than: must match');
  });
});

describe('JobsList with prune', () => {
  let widget: Widget | undefined;
  afterEach(() => widget?.dispose());

  it('hides finished jobs older than the chosen age, and says how many', async () => {
    const jobs = [
      job('old-done', 'Complete', '2026-01-01T00:00:00Z'),
      job('still-running', 'Running', null)
    ];
    widget = await render(
      <JobsList
        {...jobsListProps({
          now: NOW,
          jobs,
          onPrune: async () => ({ dry_run: true, jobs: [] })
        })}
      />
    );
    const node = widget.node;
    const rows = () =>
      [...node.querySelectorAll('[data-job]')].map(r =>
        r.getAttribute('data-job')
      );
    expect(rows()).toEqual(['old-done', 'still-running']);
    const hide = select(node, 'Hide finished older than');
    await inAct(() => {
      hide.value = String(7 * DAY);
      hide.dispatchEvent(new Event('change', { bubbles: true }));
    });
    expect(rows()).toEqual(['still-running']);
    expect(node.querySelector('.kale-ext-PruneHidden')!.textContent).toBe(
      '1 hidden'
    );
  });
});
