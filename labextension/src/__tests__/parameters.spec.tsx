import type { Widget } from '@lumino/widgets';
import * as React from 'react';

import { emptyForm } from '../form/model';
import { emptySweep } from '../form/sweep';
import { ParametersEditor } from '../panel/sweep/parameters';
import { render } from './render';

/**
 * The parameters section says what it knows, also when the notebook does
 * not compile.
 */
function editor(
  state: 'checking' | 'known' | 'stale' | 'unreadable',
  defaults?: { [name: string]: number }
): Promise<Widget> {
  return render(
    <ParametersEditor
      form={emptyForm()}
      errors={[]}
      onChange={() => undefined}
      defaults={defaults}
      state={state}
    />
  );
}

describe('ParametersEditor', () => {
  let widget: Widget | undefined;
  afterEach(() => widget?.dispose());

  it.each([
    ['checking', undefined, 'Reading the parameters…'],
    ['known', {}, 'No parameters: tag a cell of literal assignments'],
    [
      'unreadable',
      undefined,
      'Cannot read the parameters: the notebook does not compile'
    ]
  ] as const)('%s, with %j: %s', async (state, defaults, text) => {
    widget = await editor(state, defaults);
    expect(widget.node.textContent).toContain(text);
    expect(widget.node.querySelectorAll('input')).toHaveLength(0);
  });

  it('shows the last known parameters while the notebook does not compile', async () => {
    widget = await editor('stale', { epochs: 6 });
    expect(widget.node.textContent).toContain(
      'The notebook does not compile now'
    );
    const input = widget.node.querySelector('input')!;
    expect(input.getAttribute('aria-label')).toBe('Parameter epochs');
    expect(input.value).toBe('6');
  });

  it('says an emptied field uses the default, which it shows greyed', async () => {
    widget = await render(
      <ParametersEditor
        form={{ ...emptyForm(), parameters: { epochs: '' } }}
        errors={[]}
        onChange={() => undefined}
        defaults={{ epochs: 6 }}
        state="known"
      />
    );
    const input = widget.node.querySelector('input')!;
    expect(input.value).toBe('');
    expect(input.getAttribute('placeholder')).toBe('6');
    expect(widget.node.textContent).toContain('empty: the default 6 is used');
  });

  it("a sweep's empty Metric shows no made-up value and says the trials are not ranked", async () => {
    widget = await render(
      <ParametersEditor
        form={emptyForm()}
        errors={[]}
        onChange={() => undefined}
        defaults={{ lr: 0.1 }}
        state="known"
        sweep={{ ...emptySweep(), params: { lr: '0.1,0.2' } }}
        onSweep={() => undefined}
      />
    );
    const metric = widget.node.querySelector(
      'input[aria-label="Sweep metric"]'
    )!;
    expect(metric.getAttribute('placeholder')).toBeNull();
    expect(widget.node.textContent).toContain(
      'none: trials are not ranked. Name a kale_ext.report metric (e.g. accuracy) to mark the best'
    );
  });
});
