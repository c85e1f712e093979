import type { Widget } from '@lumino/widgets';
import * as React from 'react';

import type { IRoleChange } from '../panel/notebook/cell-roles';
import type { IActiveCell } from '../panel/notebook/cells';
import { jobFunctionOf, TagEditor, untaggedNote } from '../tags/editor';
import type { Kale } from '../types';
import { render } from './render';

const GRAMMAR: Kale.ITag[] = [
  { tag: 'imports', role: 'imports', help: 'imports' },
  { tag: 'parameters', role: 'parameters', help: 'parameters' },
  { tag: 'pipeline-parameters', role: 'parameters', help: "Kale's name" },
  { tag: 'skip', role: 'skip', help: 'skip' }
];

function editor(
  tags: string[],
  change: IRoleChange | null = null,
  onChoose = jest.fn(),
  onUndo = jest.fn()
): Promise<Widget> {
  const cell: IActiveCell = { index: 2, type: 'code', tags };
  return render(
    <TagEditor
      cell={cell}
      grammar={GRAMMAR}
      change={change}
      onChoose={onChoose}
      onUndo={onUndo}
    />
  );
}

function radios(widget: Widget): [string, string | null][] {
  return [...widget.node.querySelectorAll('[role="radio"]')].map(r => [
    r.textContent ?? '',
    r.getAttribute('aria-checked')
  ]);
}

describe('TagEditor: the role of a cell, a single choice', () => {
  let widget: Widget | undefined;
  afterEach(() => widget?.dispose());

  it('offers untagged and one chip per role, the current one checked', async () => {
    widget = await editor(['pipeline-parameters', 'hide-input']);
    const group = widget.node.querySelector('[role="radiogroup"]')!;
    expect(group.getAttribute('aria-label')).toBe('Role of cell 3');
    expect(radios(widget)).toEqual([
      ['untagged', 'false'],
      ['imports', 'false'],
      ['parameters', 'true'], // Kale's alias has the same role
      ['skip', 'false']
    ]);
    expect(widget.node.textContent).toContain('other tags: hide-input');
  });

  it('checks untagged for a cell without a role, and chooses by click', async () => {
    const onChoose = jest.fn();
    widget = await editor([], null, onChoose);
    expect(radios(widget)[0]).toEqual(['untagged', 'true']);
    expect(widget.node.textContent).toContain('untagged code runs as training');
    const chips = widget.node.querySelectorAll<HTMLElement>('[role="radio"]');
    chips[3].click();
    chips[0].click();
    expect(onChoose.mock.calls).toEqual([['skip'], [null]]);
  });

  it('says an untagged cell of a Kubeflow SDK notebook is not training code', async () => {
    const cell: IActiveCell = { index: 2, type: 'code', tags: [] };
    const jobFunction = { name: 'train_hello', cell: 4 };
    widget = await render(
      <TagEditor
        cell={cell}
        grammar={GRAMMAR}
        change={null}
        onChoose={jest.fn()}
        onUndo={jest.fn()}
        jobFunction={jobFunction}
      />
    );
    expect(widget.node.textContent).toContain(
      'Cell 3: untagged: left out of the job (the job is train_hello(), named by the train() call)'
    );
    expect(widget.node.textContent).not.toContain('runs as training');
  });

  it.each([
    [2, null, 'untagged code runs as training'],
    [
      4,
      { name: 'train_hello', cell: 4 },
      'untagged: its function train_hello() is the job (the train() call names it)'
    ],
    [
      0,
      { name: 'train_hello', cell: 4 },
      'untagged: left out of the job (the job is train_hello(), named by the train() call)'
    ]
  ])('an untagged cell %i (job function %j): %s', (index, fn, note) => {
    expect(untaggedNote(index, fn)).toBe(note);
  });

  it("finds the job's function in a compile's provenance", () => {
    const at = (setting: string, value: Kale.IProvenance['value']) => ({
      setting,
      value,
      cell: 2,
      line: 1,
      overridden_by: []
    });
    expect(jobFunctionOf([at('nodes', 2), at('function', 'train')])).toEqual({
      name: 'train',
      cell: 2
    });
    expect(jobFunctionOf([at('nodes', 2)])).toBeNull();
    expect(jobFunctionOf(undefined)).toBeNull();
  });

  it('says what the last click changed, with an Undo', async () => {
    const onUndo = jest.fn();
    const change = {
      from: 'parameters',
      to: 'skip',
      before: ['parameters'],
      after: ['skip']
    } as IRoleChange;
    widget = await editor(['skip'], change, jest.fn(), onUndo);
    const status = widget.node.querySelector('[role="status"]')!;
    expect(status.textContent).toBe('Cell 3: parameters → skip Undo');
    status.querySelector('button')!.click();
    expect(onUndo).toHaveBeenCalled();
  });
});
