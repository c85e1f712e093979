import * as React from 'react';

import { Button } from '../shared/fields';
import type { PanelMemory } from '../notebook/memory';

/**
 * The values the panel restored from the last session that differ from
 * the notebook on disk, each with the notebook's own value, and the way
 * back to those ("Use the notebook's values").
 */
export function RestoredNote(props: {
  note: PanelMemory.INote;
  onUseNotebook: () => void;
  onDismiss: () => void;
}): JSX.Element {
  const { note } = props;
  const labels = note.fields.map(f => f.label);
  return (
    <div
      className="kale-ext-RestoredNote"
      role="status"
      aria-label="Restored from your last session"
    >
      <div>
        Restored from your last session: <strong>{labels.join(', ')}</strong>.
        The notebook on disk holds other values
        {note.saved ? ` (these were kept at ${Private.time(note.saved)})` : ''}.
      </div>
      <ul className="kale-ext-RestoredNote-fields">
        {note.fields.map(f => (
          <li key={f.label} data-field={f.label}>
            {f.label}: <code>{f.restored}</code> (the notebook:{' '}
            <code>{f.notebook}</code>)
          </li>
        ))}
      </ul>
      <div className="kale-ext-Row">
        <Button kind="warn" onClick={props.onUseNotebook}>
          Use the notebook&apos;s values
        </Button>
        <Button kind="link" onClick={props.onDismiss}>
          Keep these
        </Button>
      </div>
    </div>
  );
}

/**
 * The badge of a section holding a restored value.
 */
export function RestoredBadge(): JSX.Element {
  return (
    <span
      className="kale-ext-RestoredBadge"
      title="Holds a value restored from your last session"
    >
      restored
    </span>
  );
}

/**
 * The sections (`data-section`) holding a restored value.
 */
export function restoredSections(note: PanelMemory.INote | null): Set<string> {
  return new Set(note?.fields.map(f => f.section) ?? []);
}

namespace Private {
  export function time(iso: string): string {
    const d = new Date(iso);
    return isNaN(d.getTime()) ? iso : d.toLocaleString();
  }
}
