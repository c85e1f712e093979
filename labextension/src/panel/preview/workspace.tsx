import * as React from 'react';

import type { Kale } from '../../types';
import { formatBytes } from '../shared/format';

/**
 * The files a job gets as its working directory: the folder, the count and
 * size (against its cap), how many were excluded, and a disclosure that
 * lists them with their sizes.
 */
export function WorkspaceFact(props: {
  workspace: Kale.IWorkspace | null | undefined;
}): JSX.Element {
  const { workspace } = props;
  if (!workspace) {
    return <>none: the job gets no files</>;
  }
  const list = workspace.list ?? [];
  const over = workspace.size > workspace.max_size;
  return (
    <>
      <span className={over ? 'kale-ext-mod-error' : undefined}>
        {workspaceLine(workspace)}
      </span>
      {list.length > 0 && (
        <details className="kale-ext-Fold kale-ext-FileList">
          <summary>{`List the ${plural(workspace.files, 'file')}`}</summary>
          <ul aria-label="Workspace files">
            {list.map(f => (
              <li key={f.path}>
                <code>{f.path}</code>{' '}
                <span className="kale-ext-Muted">{formatBytes(f.size)}</span>
              </li>
            ))}
          </ul>
          {workspace.list_truncated && (
            <p className="kale-ext-Muted">
              {`The first ${list.length} of ${workspace.files} files.`}
            </p>
          )}
        </details>
      )}
      {workspace.skipped.length > 0 && (
        <div className="kale-ext-Muted">
          Skipped:{' '}
          {workspace.skipped.map(s => `${s.path} (${s.reason})`).join('; ')}
        </div>
      )}
    </>
  );
}

/**
 * The workspace in a line: "nb: 3 files, 12 KiB (at most 10 MiB), 2
 * excluded".
 */
export function workspaceLine(workspace: Kale.IWorkspace): string {
  const excluded = workspace.excluded ? `, ${workspace.excluded} excluded` : '';
  return `${workspace.root || '.'}: ${plural(workspace.files, 'file')}, ${formatBytes(workspace.size)} (at most ${formatBytes(workspace.max_size)})${excluded}`;
}

function plural(n: number, one: string): string {
  return `${n} ${n === 1 ? one : `${one}s`}`;
}
