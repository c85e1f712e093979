import type { Widget } from '@lumino/widgets';
import * as React from 'react';

import { formErrors } from '../form/fields';
import { emptyForm, IJobForm } from '../form/model';
import { validateForm } from '../form/validation';
import { Validation } from '../panel/form/diagnostics';
import type { Kale } from '../types';
import { compileResult } from './fakes';
import { render } from './render';

/**
 * CHECKS: every invalid field by its label, in form order, each a link to
 * its field; the notebook's own errors linked to their cells.
 */
async function checks(
  form: IJobForm,
  compile: Kale.ICompileResult | null,
  onSelect = jest.fn()
): Promise<Widget> {
  const errors = formErrors(validateForm(form), compile, form);
  return render(
    <div className="kale-ext-PanelView">
      <details>
        <summary>Resources</summary>
        <input name="memoryLimit" aria-label="Memory limit per node" />
      </details>
      <Validation
        compile={compile}
        compiling={false}
        error=""
        form={form}
        fieldErrors={errors}
        onSelect={onSelect}
      />
    </div>
  );
}

const cpuError: Kale.IDiagnostic = {
  severity: 'error',
  message: 'requests.cpu: 4 is more than its limit 500m',
  cell: null,
  code: 'config',
  field: 'requests.cpu'
};

describe('Validation (CHECKS)', () => {
  let widget: Widget | undefined;
  afterEach(() => widget?.dispose());

  it('lists three invalid fields as three checks, by label, in form order', async () => {
    const form = {
      ...emptyForm(),
      memoryLimit: 'abc',
      name: 'MyTrainingJob',
      cpuRequest: '4',
      cpuLimit: '500m'
    };
    widget = await checks(form, compileResult());
    const node = widget.node;
    expect(node.querySelector('[role="status"]')?.textContent).toBe('3 errors');
    const items = [...node.querySelectorAll('[aria-label="Fields to fix"] li')];
    expect(items.map(li => li.querySelector('button')?.textContent)).toEqual([
      'Job name',
      'CPU request',
      'Memory limit'
    ]);
    expect(items[1].textContent).toContain('4 is more than its limit 500m');
    expect(items[0].textContent).toContain('try mytrainingjob');

    // A click takes the cursor to the field, opening its section.
    const details = node.querySelector('details')!;
    expect(details.open).toBe(false);
    items[2].querySelector('button')!.click();
    expect(details.open).toBe(true);
    expect(document.activeElement?.getAttribute('name')).toBe('memoryLimit');
  });

  it("names the server's field errors by label, and keeps the cells' errors", async () => {
    const compile = compileResult({
      ok: false,
      errors: [
        cpuError,
        { severity: 'error', message: 'undefined_frame', cell: 3, line: 2 }
      ]
    });
    const onSelect = jest.fn();
    widget = await checks(emptyForm(), compile, onSelect);
    const node = widget.node;
    expect(node.querySelector('[role="status"]')?.textContent).toBe('2 errors');
    const fields = node.querySelector('[aria-label="Fields to fix"]')!;
    expect(fields.textContent).toBe(
      'ErrorCPU request4 is more than its limit 500m'
    );
    const problems = node.querySelector('[aria-label="Problems"]')!;
    expect(problems.textContent).toContain('undefined_frame');
    problems.querySelector('button')!.click();
    expect(onSelect).toHaveBeenCalledWith(compile.errors[1]);
  });

  it('says the notebook compiles when nothing is wrong', async () => {
    widget = await checks(emptyForm(), compileResult());
    expect(widget.node.querySelector('[role="status"]')?.textContent).toBe(
      'Compiles: nb()'
    );
  });
});
