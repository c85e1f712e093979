import type { Widget } from '@lumino/widgets';
import * as React from 'react';

import { SubmitBar } from '../panel/jobs/submit-bar';
import type { Kale } from '../types';
import { render } from './render';

describe('SubmitBar', () => {
  let widget: Widget | undefined;
  afterEach(() => widget?.dispose());

  function bar(props: Partial<React.ComponentProps<typeof SubmitBar>>) {
    return render(
      <SubmitBar
        blocker=""
        submitting={false}
        onSubmit={jest.fn()}
        current={null}
        failed=""
        now={Date.parse('2026-01-01T00:01:00Z')}
        onLogs={jest.fn()}
        {...props}
      />
    );
  }

  it('says why Submit is disabled', async () => {
    widget = await bar({ blocker: 'Fix the highlighted fields first' });
    const button = widget.node.querySelector('button')!;
    expect(button.disabled).toBe(true);
    expect(widget.node.textContent).toContain(
      'Fix the highlighted fields first'
    );
  });

  it('stays enabled while a check runs, and says a click waits for it', async () => {
    const onSubmit = jest.fn();
    widget = await bar({ note: 'Checking the notebook…', onSubmit });
    const button = widget.node.querySelector('button')!;
    expect(button.disabled).toBe(false);
    expect(widget.node.textContent).toContain('Checking the notebook…');
    button.click();
    expect(onSubmit).toHaveBeenCalledTimes(1);
  });

  it('shows the current job, its status and age, and opens its logs', async () => {
    const onLogs = jest.fn();
    const job = {
      name: 'nb-abcde',
      status: 'Failed',
      reason: 'cell 2, line 1: KeyError',
      created: '2026-01-01T00:00:30Z'
    } as Kale.IJobInfo;
    widget = await bar({ current: { name: 'nb-abcde', job }, onLogs });
    const current = widget.node.querySelector('.kale-ext-CurrentJob')!;
    expect(current.getAttribute('data-status')).toBe('Failed');
    expect(current.textContent).toContain('30 s ago');
    expect(current.textContent).toContain('cell 2, line 1: KeyError');
    current.querySelector('button')!.click();
    expect(onLogs).toHaveBeenCalledWith('nb-abcde');
  });

  it('says a job was submitted before the list has it, and why a submit failed', async () => {
    widget = await bar({
      current: { name: 'nb-abcde' },
      failed: 'the cluster said no'
    });
    expect(widget.node.querySelector('[role="status"]')?.textContent).toBe(
      'Submitted'
    );
    expect(widget.node.querySelector('[role="alert"]')?.textContent).toBe(
      'Submit failed: the cluster said no'
    );
  });
});
