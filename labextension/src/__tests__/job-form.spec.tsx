import type { Widget } from '@lumino/widgets';
import * as React from 'react';

import contract from '../contract.json';
import { emptyForm, IJobForm } from '../form/model';
import { validateForm } from '../form/validation';
import { ResourceFields, ShapeFields } from '../panel/form/job-form';
import { render } from './render';

/**
 * The form's fields show the panel's checks, which are the server's rules
 * (the generated contract).
 */
function shape(change: Partial<IJobForm>): Promise<Widget> {
  const form = { ...emptyForm(), ...change };
  return render(
    <ShapeFields
      form={form}
      errors={validateForm(form)}
      onChange={() => undefined}
    />
  );
}

function field(widget: Widget, name: string) {
  const node = widget.node;
  const input = node.querySelector<HTMLInputElement>(`input[name="${name}"]`)!;
  const ids = input.getAttribute('aria-describedby') ?? '';
  return {
    invalid: input.getAttribute('aria-invalid') === 'true',
    message: ids
      .split(' ')
      .filter(id => id.endsWith('-error'))
      .map(id => node.querySelector(`[id="${id}"]`)?.textContent ?? '')
      .join('')
  };
}

describe('the job form, checked by the contract', () => {
  let widget: Widget | undefined;
  afterEach(() => widget?.dispose());

  it('marks a name the job_name pattern rejects, suggesting one it allows', async () => {
    const name = 'MyTrainingJob';
    const rule = new RegExp(contract.k8s.patterns.job_name.pattern);
    expect(rule.test(name)).toBe(false);
    expect(rule.test('mytrainingjob')).toBe(true);
    widget = await shape({ name });
    expect(field(widget, 'name')).toEqual({
      invalid: true,
      message: expect.stringMatching(/not a job name.*: try mytrainingjob$/)
    });
  });

  it('accepts a name the pattern allows', async () => {
    widget = await shape({ name: 'digits-ddp' });
    expect(field(widget, 'name')).toEqual({ invalid: false, message: '' });
  });

  it("marks nodes above the nodes option's maximum, naming the bound", async () => {
    const { maximum } = contract.options.nodes;
    widget = await shape({ nodes: String(maximum + 1) });
    expect(field(widget, 'nodes')).toEqual({
      invalid: true,
      message: `must be at most ${maximum}, not ${maximum + 1}`
    });
    widget.dispose();
    widget = await shape({ nodes: String(maximum) });
    expect(field(widget, 'nodes').invalid).toBe(false);
  });

  it("marks restarts above the max_restarts option's maximum, naming the bound", async () => {
    const { maximum } = contract.options.max_restarts;
    widget = await shape({ maxRestarts: String(maximum + 1) });
    expect(field(widget, 'maxRestarts')).toEqual({
      invalid: true,
      message: `must be at most ${maximum}, not ${maximum + 1}`
    });
    widget.dispose();
    widget = await shape({ maxRestarts: '0' });
    expect(field(widget, 'maxRestarts').invalid).toBe(false);
  });

  it('marks a memory that is no quantity by the quantity pattern', async () => {
    const form = { ...emptyForm(), memoryLimit: '4GB' };
    widget = await render(
      <ResourceFields
        form={form}
        errors={validateForm(form)}
        onChange={() => undefined}
      />
    );
    expect(field(widget, 'memoryLimit')).toEqual({
      invalid: true,
      message: '"4GB" is not a quantity (e.g. 512Mi or 4Gi)'
    });
  });

  const REPORTED = {
    cpu: '2 core(s) per node, its own',
    memory: '4Gi per node: stopped over it'
  };

  it.each([
    [
      'CPU and memory set',
      { cpuLimit: '2', memoryRequest: '4Gi' },
      REPORTED,
      'Locally: 2 core(s) per node, its own',
      'Locally: 4Gi per node: stopped over it'
    ],
    ['nothing set', {}, REPORTED, undefined, undefined],
    [
      'only the CPU set',
      { cpuRequest: '2' },
      REPORTED,
      'Locally: 2 core(s) per node, its own',
      undefined
    ],
    [
      'a CPU that is no quantity',
      { cpuLimit: '2 cores', memoryLimit: '4Gi' },
      REPORTED,
      undefined,
      'Locally: 4Gi per node: stopped over it'
    ],
    [
      'no preview (the notebook has an error)',
      { cpuLimit: '2', memoryLimit: '4Gi' },
      null,
      undefined,
      undefined
    ]
  ] as [string, Partial<IJobForm>, typeof REPORTED | null, string?, string?][])(
    "on Local says in the server's words what CPU and memory do, only for values set and valid: %s",
    async (_, values, reported, cpu, memory) => {
      const form = { ...emptyForm(), ...values };
      widget = await render(
        <ResourceFields
          form={form}
          errors={validateForm(form)}
          onChange={() => undefined}
          local
          reported={reported}
        />
      );
      const hint = (name: string) =>
        widget!.node.querySelector(`[data-hint="${name}"]`)?.textContent;
      expect([hint('cpu'), hint('memory')]).toEqual([cpu, memory]);
    }
  );

  it('gives no local hints on Kubernetes', async () => {
    const form = emptyForm();
    widget = await render(
      <ResourceFields form={form} errors={[]} onChange={() => undefined} />
    );
    expect(widget.node.querySelector('[data-hint]')).toBeNull();
  });
});
