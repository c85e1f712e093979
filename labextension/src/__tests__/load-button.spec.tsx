import type { Widget } from '@lumino/widgets';
import * as React from 'react';

import { JobsList } from '../panel/jobs/jobs';
import { DEFAULT_VIEW } from '../panel/jobs/jobs-view';
import { ISaved, loadOffer } from '../results/load-result';
import type { Kale } from '../types';
import { jobInfo } from './fakes';
import { render } from './render';

const SAVED: Record<string, ISaved> = {
  'nb-saved': {
    result: { saved: true, format: 'json', size: 10, reason: null },
    files: null
  },
  'nb-none': {
    result: {
      saved: false,
      format: '',
      size: 0,
      reason: 'the function returned None'
    },
    files: []
  }
};

describe('A job row’s “Load into the notebook”', () => {
  let widget: Widget | undefined;
  afterEach(() => widget?.dispose());

  it('loads what an ended job saved, says why not when nothing was, and is not offered while it runs', async () => {
    const onLoadResult = jest.fn();
    const jobs = ['nb-saved', 'nb-none', 'nb-run'].map(name =>
      jobInfo(
        name,
        {},
        name === 'nb-run' ? { status: 'Running', finished: null } : {}
      )
    );
    widget = await render(
      <JobsList
        jobs={jobs}
        error=""
        deleting={new Set()}
        now={Date.parse('2026-01-01T01:00:00Z')}
        view={{ ...DEFAULT_VIEW, filter: 'all' }}
        onView={jest.fn()}
        notebook={null}
        metrics={() => undefined}
        onLogs={jest.fn()}
        onRerun={jest.fn()}
        onDelete={jest.fn()}
        loadOffer={(job: Kale.IJobInfo) => loadOffer(job, SAVED[job.name])}
        onLoadResult={onLoadResult}
      />
    );
    const button = (name: string) =>
      widget!.node.querySelector<HTMLButtonElement>(
        `[aria-label="Load ${name} into the notebook"]`
      );
    expect(button('nb-run')).toBeNull();

    const saved = button('nb-saved')!;
    // an icon: its tooltip names it and says what it inserts
    expect(saved.title).toMatch(
      /^Load into the notebook: Insert a cell below the active cell that loads its result/
    );
    expect(saved.getAttribute('aria-disabled')).toBeNull();
    saved.click();
    expect(onLoadResult).toHaveBeenCalledWith(jobs[0]);

    // focusable, so its tooltip can say why
    const none = button('nb-none')!;
    expect(none.disabled).toBe(false);
    expect(none.getAttribute('aria-disabled')).toBe('true');
    expect(none.title).toBe(
      'Load into the notebook: No result was saved: the function returned None'
    );
    none.click();
    expect(onLoadResult).toHaveBeenCalledTimes(1);
  });
});
