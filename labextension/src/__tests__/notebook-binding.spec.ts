import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { PromiseDelegate } from '@lumino/coreutils';

import { NotebookBinding } from '../panel/notebook/notebook-binding';
import { fakeNotebook, fakeTracker, FakeNotebook } from './fakes';

function setup(first: FakeNotebook | null) {
  const tracker = fakeTracker(first);
  const events: string[] = [];
  const name = (panel: unknown) =>
    panel ? (panel as NotebookPanel).context.localPath : 'none';
  const binding = new NotebookBinding({
    tracker: tracker as unknown as INotebookTracker,
    bound: panel => events.push(`bound ${name(panel)}`),
    ready: panel => events.push(`ready ${name(panel)}`),
    unbound: () => events.push('unbound'),
    metadataChanged: () => events.push('metadata'),
    contentChanged: () => events.push('content')
  });
  return { tracker, binding, events };
}

describe('NotebookBinding', () => {
  it('binds to a notebook and hears its changes once its file is loaded', async () => {
    const loaded = new PromiseDelegate<void>();
    const nb = fakeNotebook({ path: 'a.ipynb', ready: loaded.promise });
    const { binding, events } = setup(nb);
    binding.bind(nb.panel as unknown as NotebookPanel);
    expect(binding.panel).toBe(nb.panel);
    expect(binding.ready).toBe(false);
    expect(events).toEqual(['bound a.ipynb']);

    loaded.resolve();
    await loaded.promise;
    await Promise.resolve();
    expect(binding.ready).toBe(true);
    nb.model.setMetadata('kale_ext', { options: {} });
    nb.model.setMetadata('other_extension', {}); // not the panel's key
    expect(events).toEqual([
      'bound a.ipynb',
      'ready a.ipynb',
      'metadata',
      'content',
      'content'
    ]);
    binding.dispose();
    nb.model.setMetadata('kale_ext', {});
    expect(events).toHaveLength(6); // 'unbound' only
    expect(events[5]).toBe('unbound');
  });

  it('follows the current notebook, and the next one when it closes', async () => {
    const a = fakeNotebook({ path: 'a.ipynb' });
    const b = fakeNotebook({ path: 'b.ipynb' });
    const { tracker, binding, events } = setup(a);
    binding.bind(a.panel as unknown as NotebookPanel);
    binding.bind(a.panel as unknown as NotebookPanel); // the same: nothing
    tracker.currentChanged.emit(b.panel);
    expect(binding.panel).toBe(b.panel);
    await Promise.resolve();
    // a's file loaded after it was left: not heard
    expect(events).toEqual([
      'bound a.ipynb',
      'unbound',
      'bound b.ipynb',
      'ready b.ipynb'
    ]);
    a.model.setMetadata('kale_ext', {});
    expect(events).toHaveLength(4);

    tracker.currentWidget = a.panel;
    b.panel.disposed.emit(undefined);
    expect(binding.panel).toBe(a.panel);
    a.panel.isDisposed = true;
    a.panel.disposed.emit(undefined);
    expect(binding.panel).toBeNull();
    expect(events.slice(4)).toEqual([
      'unbound',
      'bound a.ipynb',
      'unbound',
      'bound none'
    ]);
    binding.dispose();
  });
});
