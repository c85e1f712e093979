import * as React from 'react';

import { errorMessage } from '../../errors';
import type { Kale } from '../../types';
import { formatBytes } from '../shared/format';

/**
 * A job's outputs (what it wrote to `KALE_EXT_OUTPUT_DIR`), listed with
 * their sizes when opened, and again when the job's status changes while
 * open; each file opens (in a browser tab) or downloads where Jupyter
 * serves it, when it lies under the server root.
 */
export function JobOutputs(props: {
  name: string;
  status: string;
  load: (name: string) => Promise<Kale.IJobOutputs>;
  /** Where Jupyter serves a file under the server root (`download`: as an
   * attachment). */
  fileUrl?: (path: string, download: boolean) => string;
}): JSX.Element {
  const { name, status, load } = props;
  const [open, setOpen] = React.useState(false);
  const [found, setFound] = React.useState<Kale.IJobOutputs | null>(null);
  const [error, setError] = React.useState('');
  React.useEffect(() => {
    if (!open) {
      return;
    }
    let live = true;
    load(name).then(
      outputs => {
        if (live) {
          setFound(outputs);
          setError('');
        }
      },
      reason => live && setError(errorMessage(reason))
    );
    return () => {
      live = false;
    };
  }, [open, name, status]);
  return (
    <details
      className="kale-ext-Fold kale-ext-JobOutputs"
      onToggle={event => setOpen(event.currentTarget.open)}
    >
      <summary aria-label={`Outputs of ${name}`}>
        Outputs
        {found && found.files.length > 0 ? ` (${found.files.length})` : ''}
      </summary>
      {error ? (
        <div className="kale-ext-Field-error" role="alert">
          {error}
        </div>
      ) : !found ? (
        <div className="kale-ext-Muted">Reading…</div>
      ) : (
        <OutputsList outputs={found} fileUrl={props.fileUrl} />
      )}
    </details>
  );
}

function OutputsList(props: {
  outputs: Kale.IJobOutputs;
  fileUrl?: (path: string, download: boolean) => string;
}): JSX.Element {
  const { outputs, fileUrl } = props;
  const root = outputs.root_path;
  // a link is listed, never followed: not served either
  const served = (f: Kale.IJobOutputs['files'][number]) =>
    fileUrl && typeof root === 'string' && f.link === undefined
      ? (download: boolean) =>
          fileUrl(root ? `${root}/${f.path}` : f.path, download)
      : null;
  return (
    <div>
      {outputs.files.length > 0 ? (
        <ul aria-label="Output files">
          {outputs.files.map(f => {
            const url = served(f);
            return (
              <li key={f.path}>
                {url ? (
                  <a
                    href={url(false)}
                    target="_blank"
                    rel="noopener noreferrer"
                    aria-label={`Open ${f.path}`}
                    title={`Open ${f.path} in a browser tab`}
                  >
                    <code>{f.path}</code>
                  </a>
                ) : (
                  <code>{f.path}</code>
                )}{' '}
                <span className="kale-ext-Muted">{formatBytes(f.size)}</span>
                {url && (
                  <>
                    {' '}
                    <a
                      href={url(true)}
                      download={f.path.split('/').pop()}
                      aria-label={`Download ${f.path}`}
                    >
                      Download
                    </a>
                  </>
                )}
              </li>
            );
          })}
        </ul>
      ) : (
        <div className="kale-ext-Muted">
          {outputs.listed
            ? 'No outputs yet: files the job writes to KALE_EXT_OUTPUT_DIR show here.'
            : 'Not listed here: the outputs are on a volume only a pod can read.'}
        </div>
      )}
      {outputs.note && <div className="kale-ext-Muted">{outputs.note}</div>}
      <div className="kale-ext-Muted">
        In <code>{outputs.location}</code>
      </div>
    </div>
  );
}
