import * as React from 'react';

import type { Kale } from '../../types';
import { Button } from '../shared/fields';
import { formatAge } from '../shared/format';

/**
 * Submit and the job it made, pinned to the foot of the panel so both stay
 * in view however far the form scrolls: why Submit is disabled, or the
 * current job's status (the same as its row and its logs view say) with a
 * link to its logs.
 */
export function SubmitBar(props: {
  blocker: string;
  /** Beside an enabled Submit: what a click waits for ('Checking …'). */
  note?: string;
  submitting: boolean;
  onSubmit: () => void;
  /** The job submitted last from this notebook, and its listed state. */
  current: { name: string; job?: Kale.IJobInfo } | null;
  /** The last submit failed: its message (the details are above). */
  failed: string;
  now: number;
  onLogs: (name: string) => void;
  /** What Submit does ('Submit' by default; 'Start sweep'). */
  label?: string;
}): JSX.Element {
  const { blocker, current, failed } = props;
  const job = current?.job;
  const status = job?.status ?? 'Submitted';
  // (a queued job says why it waits: `Queued (waiting for 4 CPUs)`)
  const shown = job?.status_text ?? status;
  return (
    <div className="kale-ext-SubmitBar" role="region" aria-label="Submit">
      <div className="kale-ext-Row">
        <Button
          kind="accept"
          disabled={blocker !== ''}
          aria-describedby="kale-ext-submit-why"
          aria-keyshortcuts="Control+Enter Meta+Enter"
          title="Ctrl/Cmd+Enter anywhere in the panel"
          onClick={props.onSubmit}
        >
          {props.submitting ? 'Submitting…' : (props.label ?? 'Submit')}
        </Button>
        <span id="kale-ext-submit-why" className="kale-ext-Muted">
          {blocker || props.note}
        </span>
      </div>
      {failed && (
        <div className="kale-ext-Field-error" role="alert">
          Submit failed: {failed}
        </div>
      )}
      {current && (
        <div
          className="kale-ext-CurrentJob"
          data-job={current.name}
          data-status={status}
          aria-label={`Current job ${current.name}: ${shown}`}
        >
          <span
            className={`kale-ext-Status kale-ext-Status-${status.toLowerCase()}`}
            role="status"
          >
            {shown}
          </span>
          <span className="kale-ext-CurrentJob-name" title={current.name}>
            {current.name}
          </span>
          {job?.created && (
            <span className="kale-ext-Muted">
              {formatAge(job.created, props.now)} ago
            </span>
          )}
          <Button
            kind="link"
            aria-label={`Logs of the current job ${current.name}`}
            onClick={() => props.onLogs(current.name)}
          >
            Logs
          </Button>
          {job?.reason && shown === status && (
            <div
              className={`kale-ext-CurrentJob-reason kale-ext-mod-${status === 'Failed' ? 'error' : 'info'}`}
            >
              {job.reason}
            </div>
          )}
        </div>
      )}
    </div>
  );
}
