import type { NotebookPanel } from '@jupyterlab/notebook';

import type { KaleService } from '../api';
import { FormState } from '../panel/form/form-state';
import { ServerFacts } from '../panel/form/server-facts';
import type { Kale } from '../types';
import { compileResult, fakeNotebook, fakeService, jobInfo } from './fakes';

function setup(
  metadata?: unknown,
  compile: Kale.ICompileResult | null = null,
  jobs: Kale.IJobInfo[] | null = null
) {
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
    jobs: () => jobs,
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

  it('says before Submit that a job of the typed name exists, as soon as it is listed', () => {
    const listed: Kale.IJobInfo[] = [];
    const { forms, changed } = setup(undefined, null, listed);
    forms.update({ name: 'long-run' });
    expect(forms.fieldErrors).toEqual([]);
    listed.push(jobInfo('long-run', {})); // the first submit, now listed
    changed.mockClear();
    forms.jobsListed();
    expect(forms.fieldErrors).toEqual([
      {
        field: 'name',
        message:
          'a job named long-run exists already: choose another name, or leave it empty for a new one'
      }
    ]);
    expect(changed).toHaveBeenCalled();
    changed.mockClear();
    forms.jobsListed(); // still taken: nothing new to say
    expect(changed).not.toHaveBeenCalled();
    forms.updateSweep({ params: { lr: '0.1,0.2' } }); // a sweep's name is its own
    expect(forms.fieldErrors).toEqual([]);
  });
});
