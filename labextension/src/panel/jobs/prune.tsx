import * as React from 'react';

import type { Kale } from '../../types';
import { Button } from '../shared/fields';
import { formatBytes } from '../shared/format';

/** The ages the panel offers, as `POST jobs/prune` reads them. */
export const AGES: { label: string; value: string; seconds: number }[] = [
  { label: '1 day', value: '1d', seconds: 86400 },
  { label: '7 days', value: '7d', seconds: 7 * 86400 },
  { label: '30 days', value: '30d', seconds: 30 * 86400 },
  { label: '90 days', value: '90d', seconds: 90 * 86400 }
];
const DEFAULT_AGE = '7d';

/**
 * The jobs shown when finished jobs older than `seconds` are hidden (null:
 * every job). A created, queued or running job is always shown; a finished
 * one's age counts from its end (else its creation).
 */
export function hideOlder(
  jobs: Kale.IJobInfo[],
  seconds: number | null,
  now: number
): Kale.IJobInfo[] {
  if (seconds === null) {
    return jobs;
  }
  return jobs.filter(job => {
    if (job.status !== 'Complete' && job.status !== 'Failed') {
      return true;
    }
    const then = Date.parse(job.finished ?? job.created ?? '');
    return Number.isNaN(then) || now - then < seconds * 1000;
  });
}

/** "3d", "5h", "12m", "40s": how long ago a job finished. */
export function formatSeconds(seconds: number): string {
  const s = Math.floor(seconds);
  if (s >= 86400) {
    return `${Math.floor(s / 86400)}d`;
  }
  if (s >= 3600) {
    return `${Math.floor(s / 3600)}h`;
  }
  return s >= 60 ? `${Math.floor(s / 60)}m` : `${s}s`;
}

function diskText(job: { disk_bytes?: number | null; disk_partial?: boolean }) {
  if (job.disk_bytes === null || job.disk_bytes === undefined) {
    return '—';
  }
  return `${job.disk_partial ? '≥ ' : ''}${formatBytes(job.disk_bytes)}`;
}

export interface IPruneProps {
  /** Hide finished jobs older than this many seconds (null: hide none). */
  hide: number | null;
  /** How many jobs the filter hides now. */
  hidden?: number;
  onHide: (seconds: number | null) => void;
  /** `POST jobs/prune`. */
  prune: (body: Kale.IPruneBody) => Promise<Kale.IPruneResult>;
  /** After a prune removed jobs: list the jobs again. */
  onPruned?: () => void;
}

type Step =
  | { kind: 'closed' }
  | { kind: 'listing'; age: string }
  | { kind: 'confirm'; age: string; jobs: Kale.IPruned[] }
  | { kind: 'pruning'; age: string; jobs: Kale.IPruned[] }
  | { kind: 'done'; text: string }
  | { kind: 'error'; text: string };

/**
 * The jobs list's clean-up: a "Hide older than" filter and "Prune finished…",
 * which lists what would go (a dry run) and removes it only when confirmed;
 * outputs stay.
 */
export function PruneControls(props: IPruneProps): JSX.Element {
  const [step, setStep] = React.useState<Step>({ kind: 'closed' });
  const hideId = React.useId();
  const ageId = React.useId();

  const list = async (age: string) => {
    setStep({ kind: 'listing', age });
    try {
      const found = await props.prune({ older_than: age, dry_run: true });
      setStep({ kind: 'confirm', age, jobs: found.jobs });
    } catch (e) {
      setStep({ kind: 'error', text: (e as Error).message });
    }
  };
  const confirm = async (age: string, jobs: Kale.IPruned[]) => {
    setStep({ kind: 'pruning', age, jobs });
    try {
      const done = await props.prune({ older_than: age });
      const gone = done.jobs.filter(j => j.deleted);
      const left = done.jobs.filter(j => !j.deleted);
      const stayed = left.map(j => `${j.name} (${j.note ?? 'left'})`);
      setStep({
        kind: 'done',
        text:
          `Removed ${gone.length} ${gone.length === 1 ? 'job' : 'jobs'}; outputs kept.` +
          (stayed.length ? ` Left: ${stayed.join(', ')}.` : '')
      });
      props.onPruned?.();
    } catch (e) {
      setStep({ kind: 'error', text: (e as Error).message });
    }
  };

  const shown = step.kind === 'confirm' || step.kind === 'pruning';
  return (
    <div className="kale-ext-Prune">
      <label htmlFor={hideId} className="kale-ext-Muted">
        Hide finished older than
      </label>
      <select
        id={hideId}
        className="kale-ext-Select kale-ext-Select-small"
        value={props.hide ?? ''}
        onChange={e =>
          props.onHide(e.target.value ? Number(e.target.value) : null)
        }
      >
        <option value="">(show all)</option>
        {AGES.map(a => (
          <option key={a.value} value={a.seconds}>
            {a.label}
          </option>
        ))}
      </select>
      {props.hidden ? (
        <span className="kale-ext-Muted kale-ext-PruneHidden">
          {props.hidden} hidden
        </span>
      ) : null}
      <Button
        kind="plain"
        className="kale-ext-PruneButton"
        title="Remove finished jobs (their records and folders); their outputs stay"
        disabled={step.kind === 'listing' || step.kind === 'pruning'}
        onClick={() => void list(DEFAULT_AGE)}
      >
        Prune finished…
      </Button>
      {step.kind === 'listing' && (
        <p className="kale-ext-Muted">Finding finished jobs…</p>
      )}
      {shown && (
        <div
          className="kale-ext-PruneConfirm"
          role="dialog"
          aria-label="Prune finished jobs"
        >
          <label htmlFor={ageId}>Finished more than</label>{' '}
          <select
            id={ageId}
            className="kale-ext-Select kale-ext-Select-small"
            value={step.age}
            disabled={step.kind === 'pruning'}
            onChange={e => void list(e.target.value)}
          >
            {AGES.map(a => (
              <option key={a.value} value={a.value}>
                {a.label}
              </option>
            ))}
          </select>{' '}
          ago:
          {step.jobs.length === 0 ? (
            <p className="kale-ext-Muted">No finished job is that old.</p>
          ) : (
            <ul className="kale-ext-PruneList">
              {step.jobs.map(j => (
                <li key={j.name}>
                  {j.name} · {j.status} · {formatSeconds(j.age_seconds)} ago ·{' '}
                  {diskText(j)}
                </li>
              ))}
            </ul>
          )}
          <Button
            kind="warn"
            disabled={step.jobs.length === 0 || step.kind === 'pruning'}
            onClick={() => void confirm(step.age, step.jobs)}
          >
            {step.kind === 'pruning'
              ? 'Pruning…'
              : `Prune ${step.jobs.length} ${step.jobs.length === 1 ? 'job' : 'jobs'}`}
          </Button>{' '}
          <Button
            kind="plain"
            disabled={step.kind === 'pruning'}
            onClick={() => setStep({ kind: 'closed' })}
          >
            Cancel
          </Button>
        </div>
      )}
      {(step.kind === 'done' || step.kind === 'error') && (
        <p
          className={
            step.kind === 'error' ? 'kale-ext-Field-error' : 'kale-ext-Muted'
          }
          role={step.kind === 'error' ? 'alert' : 'status'}
        >
          {step.kind === 'error' ? `Could not prune: ${step.text}` : step.text}
        </p>
      )}
    </div>
  );
}
