import type { NotebookPanel } from '@jupyterlab/notebook';

import type { KaleService } from '../api';
import { FormState } from '../panel/form/form-state';
import { ServerFacts } from '../panel/form/server-facts';
import type { Kale } from '../types';
import { compileResult, fakeNotebook, fakeService } from './fakes';

function setup(metadata?: unknown, compile: Kale.ICompileResult | null = null) {
  const nb = fakeNotebook({ metadata });
  const service = fakeService();
  const calls = {
    changed: jest.fn(),
    edited: jest.fn(),
    validated: jest.fn(),
    recheck: jest.fn()
  };
  const forms = new FormState({
    service: service as unknown as KaleService,
    server: new ServerFacts(service as unknown as KaleService),
    notebook: () => nb.panel as unknown as NotebookPanel,
    ready: () => true,
    compile: () => compile,
    jobName: () => 'nb-abcde',
    ...calls
  });
  return { ...nb, service, forms, ...calls };
}

describe('FormState', () => {
  it('reads the form from the notebook metadata, and checks the notebook again', () => {
    const { forms, recheck, model } = setup({ options: { nodes: 2 } });
    forms.readMetadata();
    expect(forms.form.nodes).toBe('2');
    expect(recheck).toHaveBeenCalledTimes(1);
    forms.readMetadata(); // the same form: nothing to do
    expect(recheck).toHaveBeenCalledTimes(1);
    expect(model.writes).toBe(0); // reading writes nothing
  });

  it('writes a change into the metadata and keeps it on the server; a sweep is not compiled', async () => {
    const { forms, model, panel, service, edited, recheck } = setup();
    await forms.recall(panel as unknown as NotebookPanel); // nothing kept yet
    forms.update({ nodes: '3' });
    expect(edited).toHaveBeenCalledTimes(1);
    expect(recheck).toHaveBeenCalledTimes(1);
    expect(model.metadata.kale_ext).toEqual({
      options: { nodes: 3 },
      config: {}
    });
    await forms.memory.settled();
    expect(service.savePanelState).toHaveBeenLastCalledWith(
      'dir/nb.ipynb',
      expect.anything()
    );

    forms.updateSweep({ search: 'random' });
    expect(forms.sweep.search).toBe('random');
    expect(edited).toHaveBeenCalledTimes(2);
    expect(recheck).toHaveBeenCalledTimes(1);
  });

  it('checks the fields against the last compile, and says it did', () => {
    const { forms, validated } = setup(
      undefined,
      compileResult({ parameters: { epochs: 6 } })
    );
    forms.update({ nodes: 'many' });
    expect(forms.fieldErrors.map(e => e.field)).toEqual(['nodes']);
    expect(validated).toHaveBeenCalled();
  });

  it('forgets the form when bound to another notebook', () => {
    const { forms } = setup({ options: { nodes: 2 } });
    forms.readMetadata();
    forms.reset();
    expect(forms.form.nodes).toBe('');
  });
});
