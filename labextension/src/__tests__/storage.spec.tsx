import type { Widget } from '@lumino/widgets';
import * as React from 'react';

import { emptyForm, IJobForm } from '../form/model';
import { validateForm } from '../form/validation';
import { StorageFields } from '../panel/storage/storage';
import { inAct, render } from './render';

/**
 * The Storage section: volume rows checked as typed, add and remove, shm
 * size and the outputs volume.
 */
async function storage(
  change: Partial<IJobForm>,
  local = false,
  onChange: (change: Partial<IJobForm>) => void = () => undefined
): Promise<Widget> {
  const form = { ...emptyForm(), ...change };
  return render(
    <StorageFields
      form={form}
      errors={validateForm(form, { local })}
      onChange={onChange}
      local={local}
    />
  );
}

function message(widget: Widget, name: string): string | null {
  const input = widget.node.querySelector(`input[name="${name}"]`)!;
  const ids = input.getAttribute('aria-describedby') ?? '';
  const error = ids.split(' ').find(id => id.endsWith('-error'));
  return error
    ? (widget.node.querySelector(`[id="${error}"]`)?.textContent ?? '')
    : null;
}

function click(widget: Widget, label: string): Promise<void> {
  const button = [...widget.node.querySelectorAll('button')].find(
    b => (b.getAttribute('aria-label') ?? b.textContent) === label
  )!;
  return inAct(() => button.click());
}

describe('StorageFields', () => {
  let widget: Widget | undefined;
  afterEach(() => widget?.dispose());

  it('has an empty state and adds a row', async () => {
    const changes: Partial<IJobForm>[] = [];
    widget = await storage({}, false, c => changes.push(c));
    expect(widget.node.textContent).toContain('No volumes.');
    await click(widget, 'Add volume');
    expect(changes).toEqual([{ volumes: [''] }]);
  });

  it('marks each bad volume with what is wrong, and leaves good ones', async () => {
    widget = await storage({
      volumes: ['pvc:data:/data:ro', 'nfs:x:/y', 'pvc:a:/data'],
      shmSize: '2 GB',
      outputs: 'results'
    });
    expect(message(widget, 'volumes.0')).toBeNull();
    expect(message(widget, 'volumes.1')).toMatch(
      /^"nfs" is not a volume kind: write pvc:NAME/
    );
    expect(message(widget, 'volumes.2')).toBe('/data is volume 1 (/data)');
    expect(message(widget, 'shmSize')).toBe('"2 GB" is not a size (e.g. 2Gi)');
    expect(message(widget, 'outputs')).toMatch(/not pvc:NAME or pvc:NAME/);
  });

  it('removes a row', async () => {
    const changes: Partial<IJobForm>[] = [];
    widget = await storage({ volumes: ['pvc:a:/a', 'pvc:b:/b'] }, false, c =>
      changes.push(c)
    );
    await click(widget, 'Remove volume 1');
    expect(changes).toEqual([{ volumes: ['pvc:b:/b'] }]);
  });

  it('on Local asks for the folder that stands for a pvc', async () => {
    widget = await storage({ volumes: ['pvc:data:/data'] }, true);
    expect(message(widget, 'volumes.0')).toMatch(
      /exists only on a cluster: add =DIR/
    );
    expect(widget.node.textContent).toContain(
      'Locally outputs/<job>/ beside the notebook'
    );
  });
});
