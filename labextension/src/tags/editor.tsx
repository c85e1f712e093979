import * as React from 'react';

import type { IRoleChange } from '../panel/notebook/cell-roles';
import type { IActiveCell } from '../panel/notebook/cells';
import type { Kale } from '../types';
import { editorTags, roleOf, roleTags } from './tags';

/**
 * The role of the active cell, as a single choice: one chip per role the
 * grammar offers and "untagged" (code that runs as training). Choosing one
 * replaces the cell's other role tags (other tags stay); the last change
 * can be undone here (and with the notebook's Undo).
 */
export function TagEditor(props: {
  cell: IActiveCell | null;
  grammar: Kale.ITag[];
  /** The last role change of this cell, while it can be undone. */
  change: IRoleChange | null;
  onChoose: (tag: string | null) => void;
  onUndo: () => void;
  /**
   * The function a Kubeflow SDK notebook's train() call names (the job), and
   * its cell: its other untagged cells are left out of the job.
   */
  jobFunction?: IJobFunction | null;
}): JSX.Element {
  const { cell, grammar, change } = props;
  if (!cell || cell.index < 0) {
    return <p className="kale-ext-Muted">Select a cell of the notebook.</p>;
  }
  if (cell.type !== 'code') {
    return (
      <p className="kale-ext-Muted">
        Cell {cell.index + 1} is a {cell.type} cell: only code cells are tagged.
      </p>
    );
  }
  const offered = editorTags(grammar);
  const role = roleOf(cell.tags, grammar);
  const roles = roleTags(grammar);
  const others = cell.tags.filter(t => !roles.some(o => o.tag === t));
  const choices: { tag: string | null; label: string; help: string }[] = [
    {
      tag: null,
      label: 'untagged',
      help: 'No role: the cell runs as part of the training'
    },
    ...offered.map(t => ({ tag: t.tag, label: t.tag, help: t.help }))
  ];
  return (
    <div className="kale-ext-TagEditor">
      <div
        className="kale-ext-TagEditor-tags"
        role="radiogroup"
        aria-label={`Role of cell ${cell.index + 1}`}
      >
        {choices.map(c => {
          const row = offered.find(t => t.tag === c.tag);
          const on = c.tag === null ? role === null : row?.role === role;
          return (
            <button
              key={c.label}
              type="button"
              role="radio"
              aria-checked={on}
              className={`kale-ext-Tag kale-ext-role-${row?.role ?? 'none'}${on ? ' kale-ext-mod-on' : ''}`}
              title={c.help}
              onClick={() => props.onChoose(c.tag)}
            >
              {c.label}
            </button>
          );
        })}
      </div>
      <p className="kale-ext-Muted">
        Cell {cell.index + 1}
        {role === null
          ? `: ${untaggedNote(cell.index, props.jobFunction)}`
          : ''}
        {others.length > 0 && ` · other tags: ${others.join(', ')}`}
      </p>
      {change && (
        <p className="kale-ext-TagEditor-change" role="status">
          Cell {cell.index + 1}: {change.from ?? 'untagged'} →{' '}
          {change.to ?? 'untagged'}{' '}
          <button
            type="button"
            className="kale-ext-Button kale-ext-Button-link"
            aria-label={`Undo: make cell ${cell.index + 1} ${change.from ?? 'untagged'} again`}
            onClick={props.onUndo}
          >
            Undo
          </button>
        </p>
      )}
    </div>
  );
}

/**
 * The function of a Kubeflow SDK notebook's train() call, and its cell
 * (0-based).
 */
export interface IJobFunction {
  name: string;
  cell: number;
}

/**
 * What an untagged code cell at `index` is to the job: training code, or in
 * a Kubeflow SDK notebook the job's function or a cell left out.
 */
export function untaggedNote(
  index: number,
  jobFunction?: IJobFunction | null
): string {
  if (!jobFunction) {
    return 'untagged code runs as training';
  }
  return index === jobFunction.cell
    ? `untagged: its function ${jobFunction.name}() is the job (the train() call names it)`
    : `untagged: left out of the job (the job is ${jobFunction.name}(), named by the train() call)`;
}

/**
 * The job's function as a compile's provenance names it (a Kubeflow SDK
 * notebook's train() call), or null.
 */
export function jobFunctionOf(
  provenance: Kale.IProvenance[] | undefined
): IJobFunction | null {
  const found = provenance?.find(p => p.setting === 'function');
  return found && typeof found.value === 'string'
    ? { name: found.value, cell: found.cell }
    : null;
}
