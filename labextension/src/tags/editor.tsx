import * as React from 'react';

import type { IActiveCell } from '../panel/cells';
import type { Kale } from '../types';

/**
 * The kale_ext tags of the active cell: one toggle button per offered tag
 * (a cell has one role, so pressing one replaces the others).
 */
export function TagEditor(props: {
  cell: IActiveCell | null;
  tags: Kale.ITag[];
  onToggle: (tag: string) => void;
}): JSX.Element {
  const { cell, tags } = props;
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
  const others = cell.tags.filter(t => !tags.some(o => o.tag === t));
  return (
    <div className="kale-ext-TagEditor">
      <div
        className="kale-ext-TagEditor-tags"
        role="group"
        aria-label={`Tags of cell ${cell.index + 1}`}
      >
        {tags.map(t => {
          const on = cell.tags.includes(t.tag);
          return (
            <button
              key={t.tag}
              type="button"
              className={`kale-ext-Tag kale-ext-role-${t.role}${on ? ' kale-ext-mod-on' : ''}`}
              aria-pressed={on}
              title={t.help}
              onClick={() => props.onToggle(t.tag)}
            >
              {t.tag}
            </button>
          );
        })}
      </div>
      <p className="kale-ext-Muted">
        Cell {cell.index + 1}
        {cell.tags.some(t => tags.some(o => o.tag === t))
          ? ''
          : ': untagged code runs as training'}
        {others.length > 0 && ` · other tags: ${others.join(', ')}`}
      </p>
    </div>
  );
}
