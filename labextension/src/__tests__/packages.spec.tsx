import type { Widget } from '@lumino/widgets';
import * as React from 'react';

import { emptyForm, IJobForm } from '../form/model';
import { PackagesEditor } from '../panel/form/packages';
import { inAct, render } from './render';

/**
 * The Packages section's pinning choice (`pin_packages`): its default named
 * for the backend the job runs on, a choice sent as the change.
 */
async function packages(
  change: Partial<IJobForm>,
  local: boolean,
  onChange: (change: Partial<IJobForm>) => void = () => undefined
): Promise<Widget> {
  return render(
    <PackagesEditor
      form={{ ...emptyForm(), ...change }}
      errors={[]}
      onChange={onChange}
      detected={['numpy']}
      local={local}
    />
  );
}

function pin(widget: Widget): HTMLSelectElement {
  return widget.node.querySelector<HTMLSelectElement>(
    'select[name="pinPackages"]'
  )!;
}

describe('PackagesEditor: pin package versions', () => {
  let widget: Widget | undefined;
  afterEach(() => widget?.dispose());

  it.each([
    [true, 'Default: on (a local run pins them to the versions here)'],
    [false, "Default: off (a cluster run uses the image's own)"]
  ])('names the default of the backend (local: %s)', async (local, label) => {
    widget = await packages({}, local);
    const select = pin(widget);
    expect(select.value).toBe('');
    expect([...select.options].map(o => [o.value, o.text])).toEqual([
      ['', label],
      ['on', 'On: pin to the versions installed here'],
      ['off', 'Off: install by name, only where missing']
    ]);
    expect(widget.node.textContent).toContain('Pin package versions');
  });

  it('shows the choice made and sends a new one', async () => {
    const changes: Partial<IJobForm>[] = [];
    widget = await packages({ pinPackages: 'on' }, false, c => changes.push(c));
    const select = pin(widget);
    expect(select.value).toBe('on');
    await inAct(() => {
      select.value = 'off';
      select.dispatchEvent(new Event('change', { bubbles: true }));
    });
    expect(changes).toEqual([{ pinPackages: 'off' }]);
  });
});
