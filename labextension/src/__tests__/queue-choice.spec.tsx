import type { Widget } from '@lumino/widgets';
import * as React from 'react';

import type { KaleService } from '../api';
import { fromMetadata, toMetadata } from '../form/metadata';
import { emptyForm, IJobForm, toOptions } from '../form/model';
import { QueueChoice } from '../panel/form/job-form';
import { ServerFacts } from '../panel/form/server-facts';
import type { Kale } from '../types';
import { fakeService } from './fakes';
import { inAct, render } from './render';

const QUEUES: Kale.IQueues = {
  queues: [
    { name: 'team-a', cluster_queue: 'cq', pending: 2, admitted: 1 },
    { name: 'team-b', cluster_queue: null, pending: null, admitted: null }
  ],
  reason: null
};

function choice(
  change: Partial<IJobForm>,
  queues: Kale.IQueues | null,
  onChange: (c: Partial<IJobForm>) => void = () => undefined
): Promise<Widget> {
  const form = { ...emptyForm(), ...change };
  return render(
    <QueueChoice form={form} errors={[]} queues={queues} onChange={onChange} />,
    () => true
  );
}

function select(widget: Widget): HTMLSelectElement | null {
  return widget.node.querySelector<HTMLSelectElement>('select[name="queue"]');
}

describe('the queue select', () => {
  let widget: Widget | undefined;
  afterEach(() => widget?.dispose());

  it("lists None and the namespace's LocalQueues with their ClusterQueues", async () => {
    const changes: Partial<IJobForm>[] = [];
    widget = await choice({}, QUEUES, c => changes.push(c));
    const node = select(widget)!;
    expect(node.value).toBe('');
    expect([...node.options].map(o => [o.value, o.text])).toEqual([
      ['', 'None'],
      ['team-a', 'team-a (ClusterQueue cq)'],
      ['team-b', 'team-b']
    ]);
    await inAct(() => {
      node.value = 'team-a';
      node.dispatchEvent(new Event('change', { bubbles: true }));
    });
    expect(changes).toEqual([{ queue: 'team-a' }]);
  });

  it('keeps a chosen queue the namespace no longer lists, marked', async () => {
    widget = await choice({ queue: 'gone' }, QUEUES);
    const node = select(widget)!;
    expect(node.value).toBe('gone');
    expect([...node.options].map(o => o.text)).toContain('gone (not found)');
  });

  it('shows nothing when there is no queue to choose and none is chosen', async () => {
    widget = await choice({}, { queues: [], reason: 'no Kueue' });
    expect(select(widget)).toBeNull();
    widget.dispose();
    widget = await choice({}, null);
    expect(select(widget)).toBeNull();
  });

  it("is sent as the queue option and kept in the notebook's metadata", () => {
    const form = { ...emptyForm(), queue: 'team-a' };
    expect(toOptions(form).queue).toBe('team-a');
    expect(toOptions(emptyForm()).queue).toBeUndefined();
    const meta = toMetadata(form);
    const back = fromMetadata(meta);
    expect(back.queue).toBe('team-a');
    expect(back.extraOptions).toEqual({});
  });

  it('is loaded with the rest of what the server offers', async () => {
    const service = fakeService();
    service.listQueues.mockResolvedValue(QUEUES);
    const facts = new ServerFacts(service as unknown as KaleService);
    await facts.load(false);
    expect(facts.queues).toEqual(QUEUES);
    expect(facts.loadError).toBe('');
  });
});
