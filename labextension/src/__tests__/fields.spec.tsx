import type { Widget } from '@lumino/widgets';
import * as React from 'react';

import { stopIcon } from '@jupyterlab/ui-components';

import { IconButton, Section } from '../panel/shared/fields';
import { inAct, render } from './render';

// React's act() flushes every update a toggle schedules before it returns.
(
  globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }
).IS_REACT_ACT_ENVIRONMENT = true;

/**
 * Click a `<details>`' summary and wait for its toggle and what React does
 * with it.
 */
function toggle(details: HTMLDetailsElement): Promise<void> {
  return inAct(async () => {
    const toggled = new Promise(resolve =>
      details.addEventListener('toggle', resolve, { once: true })
    );
    details.querySelector('summary')!.click();
    await toggled;
  });
}

describe('Section', () => {
  let widget: Widget | undefined;
  afterEach(() => widget?.dispose());

  it('stays open when a list inside it folds', async () => {
    widget = await render(
      <Section id="job" title="Job">
        <details className="inner" open>
          <summary>Packages</summary>
          <ul>
            <li>numpy 2.3.1</li>
          </ul>
        </details>
      </Section>
    );
    const outer = widget.node.querySelector<HTMLDetailsElement>(
      '[data-section="job"]'
    )!;
    const inner = widget.node.querySelector<HTMLDetailsElement>('.inner')!;
    await toggle(inner);
    expect(inner.open).toBe(false);
    expect(outer.open).toBe(true);

    // Its own toggle still folds it, and opens it again.
    await toggle(outer);
    expect(outer.open).toBe(false);
    await toggle(outer);
    expect(outer.open).toBe(true);
  });
});

describe('IconButton', () => {
  let widget: Widget | undefined;
  afterEach(() => widget?.dispose());

  it('shows its icon only: its label is its name, and its tooltip unless a title says more', async () => {
    const onClick = jest.fn();
    widget = await render(
      <>
        <IconButton icon={stopIcon} label="Stop job-a" onClick={onClick} />
        <IconButton
          icon={stopIcon}
          label="Stop job-b"
          title="Stop: end its processes"
          disabled
        />
      </>
    );
    const [a, b] = [...widget.node.querySelectorAll('button')];
    expect(a.getAttribute('aria-label')).toBe('Stop job-a');
    expect(a.title).toBe('Stop job-a');
    expect(a.textContent).toBe('');
    expect(a.querySelector('svg')).not.toBeNull();
    a.click();
    expect(onClick).toHaveBeenCalledTimes(1);
    expect(b.getAttribute('aria-label')).toBe('Stop job-b');
    expect(b.title).toBe('Stop: end its processes');
    expect(b.disabled).toBe(true);
  });
});
