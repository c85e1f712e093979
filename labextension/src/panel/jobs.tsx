import * as React from 'react';

import type { Kale } from '../types';
import { Button } from './fields';
import { formatAge } from './format';

export interface IJobsProps {
  jobs: Kale.IJobInfo[] | null;
  error: string;
  deleting: Set<string>;
  now: number;
  /** A job whose row should come into view once it is listed. */
  revealing?: string | null;
  onRevealed?: () => void;
  canRerun: (job: Kale.IJobInfo) => boolean;
  onLogs: (name: string) => void;
  onRerun: (job: Kale.IJobInfo) => void;
  onDelete: (name: string) => void;
}

/**
 * The jobs, newest first, with their live status.
 */
export function JobsList(props: IJobsProps): JSX.Element {
  const { jobs, error } = props;
  return (
    <div className="kale-ext-Jobs">
      {error && (
        <div className="kale-ext-Field-error" role="alert">
          Could not list the jobs: {error}
        </div>
      )}
      {jobs === null && !error && <p className="kale-ext-Muted">Loading…</p>}
      {jobs !== null && jobs.length === 0 && (
        <p className="kale-ext-Muted">No jobs yet.</p>
      )}
      {jobs !== null && jobs.length > 0 && (
        <ul className="kale-ext-JobList" aria-label="Jobs">
          {jobs.map(job => (
            <JobRow key={job.name} job={job} {...props} />
          ))}
        </ul>
      )}
    </div>
  );
}

function JobRow(props: IJobsProps & { job: Kale.IJobInfo }): JSX.Element {
  const { job, now } = props;
  const deleting = props.deleting.has(job.name);
  const nodes =
    job.procs_per_node > 1
      ? `${job.num_nodes} × ${job.procs_per_node}`
      : `${job.num_nodes}`;
  const age = formatAge(job.created, now);
  const rerun = props.canRerun(job);
  const ref = React.useRef<HTMLLIElement>(null);
  const reveal = props.revealing === job.name;
  React.useEffect(() => {
    if (reveal && ref.current) {
      ref.current.scrollIntoView?.({ block: 'nearest' });
      props.onRevealed?.();
    }
  }, [reveal]);
  return (
    <li
      ref={ref}
      className="kale-ext-JobRow"
      data-job={job.name}
      data-status={job.status}
      aria-busy={deleting || undefined}
    >
      <div className="kale-ext-JobRow-head">
        <span
          className={`kale-ext-Status kale-ext-Status-${job.status.toLowerCase()}`}
        >
          {deleting ? 'Deleting' : job.status}
        </span>
        <span className="kale-ext-JobRow-name" title={job.name}>
          {job.name}
        </span>
      </div>
      <div className="kale-ext-JobRow-meta">
        {job.runtime || '—'} · {nodes} {job.num_nodes === 1 ? 'node' : 'nodes'}
        {age && (
          <>
            {' · '}
            <time dateTime={job.created ?? undefined} title={job.created ?? ''}>
              {age} ago
            </time>
          </>
        )}
      </div>
      {job.reason && (
        <div
          className={`kale-ext-JobRow-reason kale-ext-mod-${job.status === 'Failed' ? 'error' : 'info'}`}
        >
          {job.reason}
        </div>
      )}
      <div className="kale-ext-JobRow-actions">
        <Button
          kind="link"
          aria-label={`Logs of ${job.name}`}
          onClick={() => props.onLogs(job.name)}
        >
          Logs
        </Button>
        <Button
          kind="link"
          aria-label={`Rerun ${job.name}`}
          disabled={!rerun}
          title={
            rerun
              ? 'Submit again with the same options'
              : 'The options of this job are not known here'
          }
          onClick={() => props.onRerun(job)}
        >
          Rerun
        </Button>
        <Button
          kind="link"
          aria-label={`Delete ${job.name}`}
          disabled={deleting}
          onClick={() => props.onDelete(job.name)}
        >
          Delete
        </Button>
      </div>
    </li>
  );
}
