import type { INotebookTracker } from '@jupyterlab/notebook';
import { Widget } from '@lumino/widgets';

import type { KaleService } from '../api';
import { emptyForm } from '../form/model';
import { toStored } from '../form/restore';
import { emptySweep } from '../form/sweep';
import { PanelState } from '../panel/state';
import { KalePanel } from '../panel/widget';
import { fakeNotebook, fakeService, fakeTracker } from './fakes';
import { until } from './helpers';
import { inAct } from './render';

/**
 * A reload in the whole panel: the notebook on disk holds a volume and no
 * job name, the server kept the form the user last saw (a name, the volume
 * removed, a sweep), and the panel shows that form and says so.
 */

const DISK = {
  options: { volumes: ['pvc:data:/data=./data'], parameters: { epochs: 6 } },
  config: {}
};

const KEPT = toStored({
  form: {
    ...emptyForm(),
    name: 'my-run',
    parameters: { epochs: '4' },
    storedParameters: {}
  },
  sweep: { ...emptySweep(), params: { lr: '0.1, 0.01' }, parallel: '2' }
});

async function setup(state: unknown = KEPT) {
  const nb = fakeNotebook({ metadata: DISK, path: 'dir/nb.ipynb' });
  const service = fakeService();
  service.getPanelState.mockResolvedValue({
    path: 'dir/nb.ipynb',
    state: JSON.parse(JSON.stringify(state)),
    saved: '2026-01-01T00:00:00+00:00'
  });
  const panelState = new PanelState({
    service: service as unknown as KaleService,
    tracker: fakeTracker(nb) as unknown as INotebookTracker,
    openLogs: jest.fn(),
    compileDelay: 0,
    pollInterval: 1e6
  });
  const panel = new KalePanel(panelState);
  await inAct(() => Widget.attach(panel, document.body));
  return { ...nb, service, state: panelState, panel };
}

const section = (panel: KalePanel, id: string) =>
  panel.node.querySelector(`[data-section="${id}"]`) as HTMLDetailsElement;

describe('the restored-state note', () => {
  let ctx: Awaited<ReturnType<typeof setup>>;
  afterEach(() => {
    ctx?.panel.dispose();
  });

  it("shows every value restored with the notebook's, and opens the collapsed Storage", async () => {
    ctx = await setup();
    const note = await until(() =>
      ctx.panel.node.querySelector(
        '[aria-label="Restored from your last session"]'
      )
    );
    expect(ctx.service.getPanelState).toHaveBeenCalledWith('dir/nb.ipynb');
    const items = [...note.querySelectorAll('li')].map(li => li.textContent);
    expect(items).toEqual([
      'job name: my-run (the notebook: none)',
      'volumes: none (the notebook: pvc:data:/data=./data)',
      'parameter epochs: 4 (the notebook: 6)',
      'sweep of lr: 0.1, 0.01 (the notebook: none)',
      'trials at a time: 2 (the notebook: 1)'
    ]);
    // what the form shows is what the next job gets, and the notebook follows
    expect(ctx.state.form.name).toBe('my-run');
    expect(ctx.state.form.volumes).toEqual([]);
    expect(ctx.model.metadata.kale_ext).toEqual({
      options: { name: 'my-run', parameters: { epochs: '4' } },
      config: {},
      sweep: expect.objectContaining({ params: { lr: '0.1, 0.01' } })
    });
    const storage = section(ctx.panel, 'storage');
    expect(storage.open).toBe(true); // never hidden in a collapsed section
    expect(storage.querySelector('summary')?.textContent).toContain('restored');
    expect(section(ctx.panel, 'packages').open).toBe(false);
    expect(section(ctx.panel, 'packages').textContent).not.toContain(
      'restored'
    );
    // nothing was sent back: the server holds these values already
    expect(ctx.service.savePanelState).not.toHaveBeenCalled();
  });

  it("goes back to the notebook's values, and keeps those", async () => {
    ctx = await setup();
    const use = await until(() =>
      [...ctx.panel.node.querySelectorAll('button')].find(
        b => b.textContent === "Use the notebook's values"
      )
    );
    await inAct(() => use.click());
    expect(ctx.state.form.name).toBe('');
    expect(ctx.state.form.volumes).toEqual(['pvc:data:/data=./data']);
    expect(ctx.state.sweep.params).toEqual({});
    expect(ctx.model.metadata.kale_ext).toEqual(DISK);
    expect(
      ctx.panel.node.querySelector(
        '[aria-label="Restored from your last session"]'
      )
    ).toBeNull();
    await ctx.state.memory.settled();
    const [path, sent] = ctx.service.savePanelState.mock.calls.slice(-1)[0];
    expect(path).toBe('dir/nb.ipynb');
    expect(sent.form.volumes).toEqual(['pvc:data:/data=./data']);
    expect(sent.form.name).toBe('');
  });

  it('keeps each later change for the next reload', async () => {
    ctx = await setup();
    await until(() => ctx.state.memory.note);
    const keep = [...ctx.panel.node.querySelectorAll('button')].find(
      b => b.textContent === 'Keep these'
    )!;
    await inAct(() => keep.click());
    expect(ctx.state.memory.note).toBeNull();
    expect(ctx.state.form.name).toBe('my-run');
    ctx.state.updateForm({ nodes: '3' });
    await ctx.state.memory.settled();
    expect(ctx.service.savePanelState.mock.calls.slice(-1)[0][1].form).toEqual(
      expect.objectContaining({ name: 'my-run', nodes: '3', volumes: [] })
    );
  });

  it('shows no note when nothing kept differs from the notebook', async () => {
    ctx = await setup(null);
    await until(() => ctx.service.getPanelState.mock.calls.length > 0);
    await inAct(() => ctx.state.memory.settled());
    expect(ctx.state.memory.note).toBeNull();
    expect(ctx.state.form.volumes).toEqual(['pvc:data:/data=./data']);
    expect(section(ctx.panel, 'storage').open).toBe(false);
  });
});
