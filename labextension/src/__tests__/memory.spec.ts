import type { KaleService } from '../api';
import { emptyForm } from '../form/model';
import { IPanelValues, toStored } from '../form/restore';
import { emptySweep } from '../form/sweep';
import { PanelMemory } from '../panel/notebook/memory';
import { fakeService } from './fakes';

function values(name = '', volumes: string[] = []): IPanelValues {
  return { form: { ...emptyForm(), name, volumes }, sweep: emptySweep() };
}

function kept(v: IPanelValues) {
  return {
    path: 'nb.ipynb',
    state: JSON.parse(JSON.stringify(toStored(v))),
    saved: '2026-01-01T00:00:00+00:00'
  };
}

/** A promise and the function that resolves it. */
function deferred<T>(): [Promise<T>, (v: T) => void] {
  let resolve: (v: T) => void = () => undefined;
  const promise = new Promise<T>(r => (resolve = r));
  return [promise, resolve];
}

function setup() {
  const service = fakeService();
  const changed = jest.fn();
  const memory = new PanelMemory(service as unknown as KaleService, changed);
  return { service, changed, memory };
}

describe('PanelMemory', () => {
  it('restores kept values that differ from the notebook, and says which', async () => {
    const { service, memory, changed } = setup();
    service.getPanelState.mockResolvedValue(kept(values('my-run')));
    const disk = values('', ['pvc:d:/d=./d']);
    const restored = await memory.recall('nb.ipynb', disk);
    expect(service.getPanelState).toHaveBeenCalledWith('nb.ipynb');
    expect(restored).toEqual(values('my-run'));
    expect(memory.note?.fields.map(f => f.label)).toEqual([
      'job name',
      'volumes'
    ]);
    expect(memory.note?.saved).toBe('2026-01-01T00:00:00+00:00');
    expect(changed).toHaveBeenCalled();
    expect(memory.useNotebook(restored!)).toEqual(disk);
    expect(memory.note).toBeNull();
  });

  it('lists only the restored fields not edited since, and leaves when none is left', async () => {
    const { service, memory } = setup();
    service.getPanelState.mockResolvedValue(
      kept(values('my-run', ['pvc:k:/k=./k']))
    );
    const disk = values('', ['pvc:d:/d=./d']);
    await memory.recall('nb.ipynb', disk);
    const note = (m: PanelMemory) =>
      m.note?.fields.map(f => `${f.label}: ${f.restored}`);
    expect(note(memory)).toEqual(['job name: my-run', 'volumes: pvc:k:/k=./k']);
    // the user edits the restored name: theirs now, not restored
    memory.remember(values('newer', ['pvc:k:/k=./k']));
    expect(note(memory)).toEqual(['volumes: pvc:k:/k=./k']);
    // the notebook's values go back only where the note says: the edit stays
    expect(memory.useNotebook(values('newer', ['pvc:k:/k=./k']))).toEqual(
      values('newer', ['pvc:d:/d=./d'])
    );
    expect(memory.note).toBeNull();

    await memory.recall('nb.ipynb', disk);
    memory.remember(values('newer', ['pvc:d:/d=./d']));
    expect(memory.note).toBeNull(); // no field holds its restored value
  });

  it.each([
    ['nothing is kept', null],
    ["the kept values are the notebook's", kept(values('a'))]
  ])('restores nothing and shows no note when %s', async (_, record) => {
    const { service, memory } = setup();
    service.getPanelState.mockResolvedValue(
      record ?? { path: 'nb.ipynb', state: null, saved: null }
    );
    expect(await memory.recall('nb.ipynb', values('a'))).toBeNull();
    expect(memory.note).toBeNull();
  });

  it('keeps every change, one request at a time, the last values winning', async () => {
    const { service, memory } = setup();
    await memory.recall('nb.ipynb', values());
    const [first, release] = deferred<unknown>();
    service.savePanelState.mockReturnValueOnce(first);
    memory.remember(values('a'));
    memory.remember(values('ab'));
    memory.remember(values('abc'));
    expect(service.savePanelState).toHaveBeenCalledTimes(1);
    release({});
    await memory.settled();
    await memory.settled();
    const sent = service.savePanelState.mock.calls.map(c => c[1].form.name);
    expect(sent).toEqual(['a', 'abc']);
    memory.remember(values('abc')); // the same again: nothing to send
    await memory.settled();
    expect(service.savePanelState).toHaveBeenCalledTimes(2);
  });

  it('lets a change made while asking win over the kept state', async () => {
    const { service, memory } = setup();
    const [answer, reply] = deferred<unknown>();
    service.getPanelState.mockReturnValueOnce(answer);
    const recalled = memory.recall('nb.ipynb', values());
    memory.remember(values('typed'));
    expect(service.savePanelState).not.toHaveBeenCalled();
    reply(kept(values('old')));
    expect(await recalled).toBeNull();
    await memory.settled();
    expect(memory.note).toBeNull();
    expect(service.savePanelState.mock.calls[0][1].form.name).toBe('typed');
  });

  it('keeps nothing before a notebook is recalled, nor after it is left', async () => {
    const { service, memory } = setup();
    memory.remember(values('early'));
    const [answer, reply] = deferred<unknown>();
    service.getPanelState.mockReturnValueOnce(answer);
    const recalled = memory.recall('nb.ipynb', values());
    memory.reset(); // bound to another notebook meanwhile
    reply(kept(values('old')));
    expect(await recalled).toBeNull();
    memory.remember(values('late'));
    await memory.settled();
    expect(service.savePanelState).not.toHaveBeenCalled();
    expect(memory.note).toBeNull();
  });

  it('keeps the values of a renamed notebook at its new path', async () => {
    const { service, memory } = setup();
    await memory.recall('nb.ipynb', values());
    memory.remember(values('a'), 'nb.ipynb');
    await memory.settled();
    memory.remember(values('a'), 'renamed.ipynb'); // the same values, a new path
    await memory.settled();
    expect(service.savePanelState.mock.calls.map(c => c[0])).toEqual([
      'nb.ipynb',
      'renamed.ipynb'
    ]);
  });

  it('says when the values cannot be kept, and clears it once they are', async () => {
    const { service, memory } = setup();
    await memory.recall('nb.ipynb', values());
    service.savePanelState.mockRejectedValueOnce(new Error('disk full'));
    memory.remember(values('a'));
    await memory.settled();
    expect(memory.error).toBe(
      "The panel's values could not be kept for a reload: disk full"
    );
    memory.remember(values('b'));
    await memory.settled();
    expect(memory.error).toBe('');
  });
});
