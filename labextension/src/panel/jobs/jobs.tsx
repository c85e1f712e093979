import {
  deleteIcon,
  editIcon,
  fastForwardIcon,
  listIcon,
  refreshIcon,
  stopIcon
} from '@jupyterlab/ui-components';
import * as React from 'react';

import { formatValue } from '../../metrics/format';
import { ProgressBar } from '../../progress/bar';
import { LoadResultButton } from '../../results/load-button';
import type { ILoadOffer } from '../../results/load-result';
import { formatDuration } from '../../timeline';
import type { Kale } from '../../types';
import { Button, IconButton } from '../shared/fields';
import { JobOutputs } from '../storage/job-outputs';
import {
  INameParts,
  namesParts,
  splitTimes,
  timeAgo,
  timeTitle
} from './job-label';
import { hideOlder, PruneControls } from './prune';
import type { RowActions } from './row-actions';
import {
  COLUMN_LABELS,
  FinalMetrics,
  IJobRow,
  IJobsView,
  JobColumn,
  jobRows,
  metricNames,
  notebookOf,
  STATUS_FILTERS,
  StatusFilter
} from './jobs-view';

export interface IJobsProps {
  jobs: Kale.IJobInfo[] | null;
  error: string;
  deleting: Set<string>;
  now: number;
  /** How the user arranged the list, and a change of it. */
  view: IJobsView;
  onView: (change: Partial<IJobsView>) => void;
  /** The path of the bound notebook (for "this notebook"). */
  notebook: string | null;
  /** A job's final metrics, once read. */
  metrics: (name: string) => FinalMetrics | undefined;
  /** A job whose row should come into view once it is listed. */
  revealing?: string | null;
  onRevealed?: () => void;
  onLogs: (name: string) => void;
  /** Submit the job again as recorded (the server's snapshot and options). */
  onRerun: (name: string) => void;
  /** Resume a Failed or Stopped job from its last checkpoint. */
  onResume?: (name: string) => void;
  /** Load the job's recorded options into the form. */
  onEditRerun?: (job: Kale.IJobInfo) => void;
  /** Stop a running job and keep it. */
  onStop?: (name: string) => void;
  /** Whether a row's action is on its way, and what its last one said. */
  busy?: (name: string) => boolean;
  rowMessage?: (name: string) => RowActions.IMessage | undefined;
  onDismiss?: (name: string) => void;
  onDelete: (name: string) => void;
  /** Open the notebook a job failed in at its failing cell. */
  onOpenFailure?: (job: Kale.IJobInfo) => void;
  /** Read what a job wrote to its outputs folder. */
  outputs?: (name: string) => Promise<Kale.IJobOutputs>;
  /** Where Jupyter serves a file under the server root (open, download). */
  fileUrl?: (path: string, download: boolean) => string;
  /** The jobs checked for comparing, and checking one. */
  selected?: string[];
  onSelect?: (name: string, on: boolean) => void;
  /** Open the side-by-side view of the checked jobs. */
  onCompare?: (names: string[]) => void;
  /** Open the view of a sweep. */
  onSweep?: (name: string) => void;
  /** An ended job's "Load into the notebook" (null: none), and using it. */
  loadOffer?: (job: Kale.IJobInfo) => ILoadOffer | null;
  onLoadResult?: (job: Kale.IJobInfo) => void;
  /** `POST jobs/prune` (none: no prune action), and listing again after one. */
  onPrune?: (body: Kale.IPruneBody) => Promise<Kale.IPruneResult>;
  onPruned?: () => void;
}

const COLUMNS: JobColumn[] = [
  'state',
  'name',
  'parameters',
  'duration',
  'metric',
  'created'
];

/**
 * The jobs: this notebook's or all, with their key parameters, duration
 * and final metric, sorted by any column; a failed job says why and links
 * to the cell it failed in.
 */
export function JobsList(props: IJobsProps): JSX.Element {
  const { error, view, notebook } = props;
  const [hide, setHide] = React.useState<number | null>(null);
  const jobs = props.jobs && hideOlder(props.jobs, hide, props.now);
  const names = metricNames(
    (jobs ?? []).map(j => props.metrics(j.name) ?? new Map())
  );
  const metric =
    view.metric && names.includes(view.metric)
      ? view.metric
      : (names[0] ?? null);
  const rows = jobs
    ? jobRows(jobs, view, {
        notebook,
        now: props.now,
        metrics: props.metrics,
        metric
      })
    : [];
  const parts = namesParts(rows.map(row => row.job.name));
  const narrowed = view.status !== null || view.query.trim() !== '';
  // the notebook a job came from, where jobs of other notebooks are listed
  const showNotebook = view.filter === 'all' || !notebook;
  return (
    <div className="kale-ext-Jobs">
      <JobsToolbar {...props} metric={metric} names={names} />
      {props.onPrune && (
        <PruneControls
          hide={hide}
          hidden={(props.jobs?.length ?? 0) - (jobs?.length ?? 0)}
          onHide={setHide}
          prune={props.onPrune}
          onPruned={props.onPruned}
        />
      )}
      {error && (
        <div className="kale-ext-Field-error" role="alert">
          Could not list the jobs: {error}
        </div>
      )}
      {jobs === null && !error && <p className="kale-ext-Muted">Loading…</p>}
      {jobs !== null && narrowed && (
        <p className="kale-ext-JobsShown kale-ext-Muted" role="status">
          {rows.length} of {jobs.length} shown{' '}
          <Button
            kind="link"
            onClick={() => props.onView({ status: null, query: '' })}
          >
            Clear filters
          </Button>
        </p>
      )}
      {jobs !== null && rows.length === 0 && !narrowed && (
        <p className="kale-ext-Muted">
          {jobs.length && view.filter === 'notebook' && notebook
            ? `No jobs of this notebook yet (${jobs.length} of others: show all).`
            : 'No jobs yet.'}
        </p>
      )}
      {rows.length > 0 && (
        <div className="kale-ext-JobTable" role="table" aria-label="Jobs">
          <div className="kale-ext-JobTable-head" role="row">
            {COLUMNS.map(c => (
              <ColumnHeader key={c} column={c} metric={metric} {...props} />
            ))}
          </div>
          {rows.map(row => (
            <JobRow
              key={row.job.name}
              row={row}
              metric={metric}
              parts={parts.get(row.job.name)!}
              showNotebook={showNotebook}
              {...props}
            />
          ))}
        </div>
      )}
    </div>
  );
}

function JobsToolbar(
  props: IJobsProps & { metric: string | null; names: string[] }
): JSX.Element {
  const { view, onView, notebook, names } = props;
  const metricId = React.useId();
  const listed = new Set((props.jobs ?? []).map(j => j.name));
  const checked = (props.selected ?? []).filter(n => listed.has(n));
  // how many jobs each choice lists, so the section's count (every job) never puzzles
  const counts = props.jobs && {
    notebook: props.jobs.filter(j => notebookOf(j) === notebook).length,
    all: props.jobs.length
  };
  return (
    <>
      <div className="kale-ext-JobsToolbar">
        <div
          role="radiogroup"
          aria-label="Show jobs of"
          className="kale-ext-Toggle"
        >
          {(['notebook', 'all'] as const).map(f => (
            <button
              key={f}
              type="button"
              role="radio"
              aria-checked={view.filter === f}
              disabled={f === 'notebook' && !notebook}
              className={`kale-ext-Button kale-ext-Button-plain${view.filter === f ? ' kale-ext-mod-on' : ''}`}
              onClick={() => onView({ filter: f })}
            >
              {f === 'notebook' ? 'This notebook' : 'All'}
              {counts && notebook && (
                <>
                  {' '}
                  <span className="kale-ext-Count">{counts[f]}</span>
                </>
              )}
            </button>
          ))}
        </div>
        {names.length > 1 && (
          <>
            <label htmlFor={metricId} className="kale-ext-Muted">
              Metric
            </label>
            <select
              id={metricId}
              className="kale-ext-Select kale-ext-Select-small"
              value={props.metric ?? ''}
              onChange={e => onView({ metric: e.target.value })}
            >
              {names.map(n => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </select>
          </>
        )}
        {props.onCompare && (
          <Button
            kind="plain"
            className="kale-ext-CompareButton"
            disabled={checked.length < 2}
            title={
              checked.length < 2
                ? 'Check two or more jobs to compare them'
                : `Compare ${checked.join(', ')} side by side`
            }
            onClick={() => props.onCompare?.(checked)}
          >
            Compare{checked.length ? ` (${checked.length})` : ''}
          </Button>
        )}
      </div>
      <JobsFilters {...props} />
    </>
  );
}

/**
 * Narrow the list: to a state (as `kale-ext jobs --status`) and to names
 * holding a text; and, where the panel is too narrow for the columns'
 * headers, the order in one line.
 */
function JobsFilters(
  props: IJobsProps & { metric: string | null }
): JSX.Element {
  const { view, onView } = props;
  const label = (column: JobColumn) =>
    column === 'metric' && props.metric ? props.metric : COLUMN_LABELS[column];
  return (
    <div className="kale-ext-JobsToolbar kale-ext-JobsFilters">
      <select
        className="kale-ext-Select kale-ext-Select-small"
        aria-label="Filter by state"
        value={view.status ?? ''}
        onChange={e =>
          onView({ status: (e.target.value || null) as StatusFilter | null })
        }
      >
        <option value="">Any state</option>
        {STATUS_FILTERS.map(s => (
          <option key={s} value={s}>
            {s[0].toUpperCase() + s.slice(1)}
          </option>
        ))}
      </select>
      <input
        type="search"
        className="kale-ext-Input kale-ext-JobsSearch"
        aria-label="Filter by name"
        placeholder="Name…"
        value={view.query}
        onChange={e => onView({ query: e.target.value })}
      />
      <span className="kale-ext-JobSort">
        <select
          className="kale-ext-Select kale-ext-Select-small"
          aria-label="Sort by"
          title="Sort by"
          value={view.sort}
          onChange={e => {
            const sort = e.target.value as JobColumn;
            onView({ sort, descending: sort === 'created' });
          }}
        >
          {COLUMNS.map(c => (
            <option key={c} value={c}>
              {label(c)}
            </option>
          ))}
        </select>
        <button
          type="button"
          className="kale-ext-Button kale-ext-Button-plain"
          aria-label={
            view.descending ? 'Sorted descending' : 'Sorted ascending'
          }
          title={
            view.sort === 'metric'
              ? view.descending
                ? 'Worst first: press for best first'
                : 'Best first: press for worst first'
              : 'Press to reverse the order'
          }
          onClick={() => onView({ descending: !view.descending })}
        >
          {view.descending ? '▾' : '▴'}
        </button>
      </span>
    </div>
  );
}

/**
 * A time as every view of the list writes it: how long ago, the time
 * itself on hover (`label` before it), again at each render.
 */
function Ago(props: { iso: string; now: number; label?: string }): JSX.Element {
  const title = timeTitle(props.iso);
  return (
    <time
      dateTime={props.iso}
      title={props.label ? `${props.label} ${title}` : title}
    >
      {timeAgo(props.iso, props.now) || props.iso}
    </time>
  );
}

/**
 * Text from the server with the times in it written as every time is.
 */
function WithTimes(props: { text: string; now: number }): JSX.Element {
  return (
    <>
      {splitTimes(props.text).map((piece, i) =>
        typeof piece === 'string' ? (
          piece
        ) : (
          <Ago key={i} iso={piece.time} now={props.now} />
        )
      )}
    </>
  );
}

/**
 * A name whose end (what tells it apart) stays in view: its start gives
 * way first, to an ellipsis.
 */
function JobName(props: { name: string; parts: INameParts }): JSX.Element {
  const { name, parts } = props;
  return (
    <span className="kale-ext-JobRow-name" title={name}>
      {parts.head && (
        <span className="kale-ext-JobName-head">{parts.head}</span>
      )}
      <span className="kale-ext-JobName-tail">{parts.tail}</span>
    </span>
  );
}

function ColumnHeader(
  props: IJobsProps & { column: JobColumn; metric: string | null }
): JSX.Element {
  const { column, view, onView } = props;
  const active = view.sort === column;
  const label =
    column === 'metric' && props.metric ? props.metric : COLUMN_LABELS[column];
  return (
    <div
      role="columnheader"
      className={`kale-ext-JobCol-${column}`}
      aria-sort={
        active ? (view.descending ? 'descending' : 'ascending') : 'none'
      }
    >
      <button
        type="button"
        className="kale-ext-SortButton"
        aria-label={`Sort by ${label}`}
        title={
          column === 'metric' && active
            ? view.descending
              ? 'Worst first'
              : 'Best first'
            : undefined
        }
        onClick={() =>
          onView(
            active
              ? { descending: !view.descending }
              : { sort: column, descending: column === 'created' }
          )
        }
      >
        {label}
        {active && (view.descending ? ' ▾' : ' ▴')}
      </button>
    </div>
  );
}

function JobRow(
  props: IJobsProps & {
    row: IJobRow;
    metric: string | null;
    parts: INameParts;
    showNotebook: boolean;
  }
): JSX.Element {
  const { row, now } = props;
  const { job } = row;
  const deleting = props.deleting.has(job.name);
  const ref = React.useRef<HTMLDivElement>(null);
  const reveal = props.revealing === job.name;
  React.useEffect(() => {
    // (its first cell: a row laid out as table cells has no box of its own)
    const cell = ref.current?.firstElementChild;
    if (reveal && cell) {
      cell.scrollIntoView?.({ block: 'nearest' });
      props.onRevealed?.();
    }
  }, [reveal]);
  const nodes =
    job.procs_per_node > 1
      ? `${job.num_nodes} × ${job.procs_per_node}`
      : `${job.num_nodes}`;
  const from = props.showNotebook ? notebookOf(job) : null;
  const busy = props.busy?.(job.name) ?? false;
  const said = props.rowMessage?.(job.name);
  const running = job.status !== 'Complete' && job.status !== 'Failed';
  const failure = job.failure;
  const final = props.metric
    ? props.metrics(job.name)?.get(props.metric)
    : undefined;
  const status = deleting ? 'Deleting' : (job.status_text ?? job.status);
  const stopped = job.status_text === 'Stopped'; // by someone, and kept
  // a job whose other nodes are being stopped after one failed looks failed already
  const look = stopped
    ? 'stopped'
    : job.failing
      ? 'failed'
      : job.status.toLowerCase();
  return (
    <div
      ref={ref}
      role="row"
      className="kale-ext-JobRow"
      data-job={job.name}
      data-status={job.status}
      aria-busy={deleting || undefined}
    >
      <div role="cell" className="kale-ext-JobCol-state">
        <span className={`kale-ext-Status kale-ext-Status-${look}`}>
          {status}
        </span>
      </div>
      <div role="cell" className="kale-ext-JobCol-name">
        <span className="kale-ext-JobRow-title">
          {props.onSelect && (
            <input
              type="checkbox"
              className="kale-ext-JobRow-check"
              aria-label={`Select ${job.name} to compare`}
              checked={props.selected?.includes(job.name) ?? false}
              onChange={e => props.onSelect?.(job.name, e.target.checked)}
            />
          )}
          <JobName name={job.name} parts={props.parts} />
        </span>
        <span
          className="kale-ext-JobRow-meta"
          title={
            job.procs_why
              ? `${job.procs_per_node} ${job.procs_per_node === 1 ? 'process' : 'processes'} per node: ${job.procs_why}`
              : undefined
          }
        >
          {job.runtime || '—'} · {nodes}{' '}
          {job.num_nodes === 1 ? 'node' : 'nodes'}
          {from && (
            <>
              {' · '}
              <span className="kale-ext-JobRow-notebook" title={from}>
                {from.split('/').pop()}
              </span>
            </>
          )}
          {job.sweep && (
            <>
              {' · '}
              <Button
                kind="link"
                className="kale-ext-JobRow-sweep"
                aria-label={`Sweep ${job.sweep} of ${job.name}`}
                title="A trial of this sweep: open its trials"
                onClick={() => props.onSweep?.(job.sweep!)}
              >
                sweep {job.sweep}
              </Button>
            </>
          )}
          {lineageText(job, now)}
        </span>
      </div>
      <div
        role="cell"
        className={`kale-ext-JobCol-parameters${row.parameters ? '' : ' kale-ext-mod-none'}`}
        title="Parameters"
      >
        {row.parameters || <span className="kale-ext-Muted">defaults</span>}
      </div>
      <div role="cell" className="kale-ext-JobCol-duration" title="Duration">
        {row.duration !== null ? formatDuration(row.duration) : '—'}
      </div>
      <div
        role="cell"
        className={`kale-ext-JobCol-metric${final ? '' : ' kale-ext-mod-none'}`}
        title={
          running && final
            ? `${props.metric} (latest)`
            : (props.metric ?? 'Final metric')
        }
      >
        {final ? (
          <>
            {formatValue(final.value)}{' '}
            <span className="kale-ext-Muted">step {final.step}</span>
          </>
        ) : (
          '—'
        )}
      </div>
      <div role="cell" className="kale-ext-JobCol-created">
        {job.created && <Ago iso={job.created} now={now} label="Started" />}
      </div>
      {(failure || job.reason) && (
        <div
          className={`kale-ext-JobRow-reason kale-ext-mod-${(job.status === 'Failed' && !stopped) || job.status === 'Unreadable' ? 'error' : 'info'}`}
        >
          <WithTimes text={failure?.summary ?? job.reason ?? ''} now={now} />
          {failure &&
            typeof failure.cell_index === 'number' &&
            props.onOpenFailure && (
              <>
                {' '}
                <Button
                  kind="link"
                  aria-label={`Open the notebook of ${job.name} at the cell that failed`}
                  onClick={() => props.onOpenFailure?.(job)}
                >
                  Open cell {failure.cell_index + 1}
                  {failure.line ? `, line ${failure.line}` : ''}
                </Button>
              </>
            )}
        </div>
      )}
      <ProgressBar job={job} now={now} className="kale-ext-JobRow-progress" />
      <div
        className="kale-ext-JobRow-actions"
        role="group"
        aria-label={`Actions of ${job.name}`}
      >
        <IconButton
          icon={listIcon}
          label={`Logs of ${job.name}`}
          title="Logs: its output, metrics and timeline"
          onClick={() => props.onLogs(job.name)}
        />
        {running && props.onStop && (
          <IconButton
            icon={stopIcon}
            label={`Stop ${job.name}`}
            disabled={busy || deleting}
            title="Stop: end its processes or pods and keep the job: its logs, outputs and record stay"
            onClick={() => props.onStop?.(job.name)}
          />
        )}
        <IconButton
          icon={refreshIcon}
          label={`Rerun ${job.name}`}
          disabled={busy}
          title="Rerun: submit again as it ran: the notebook it ran and its options, a new name"
          onClick={() => props.onRerun(job.name)}
        />
        {job.status === 'Failed' && props.onResume && (
          <IconButton
            icon={fastForwardIcon}
            label={`Resume ${job.name}`}
            disabled={busy}
            title="Resume: submit again in its lineage, from its last checkpoint (checkpoint.latest())"
            onClick={() => props.onResume?.(job.name)}
          />
        )}
        {props.onEditRerun && (
          <IconButton
            icon={editIcon}
            label={`Edit and rerun ${job.name}`}
            title="Edit and rerun: load its options into the form, to change them before submitting"
            onClick={() => props.onEditRerun?.(job)}
          />
        )}
        <IconButton
          icon={deleteIcon}
          label={`Delete ${job.name}`}
          title="Delete: end the job and remove its logs (asks first)"
          disabled={deleting}
          onClick={() => props.onDelete(job.name)}
        />
        {props.onLoadResult && (
          <LoadResultButton
            name={job.name}
            offer={props.loadOffer?.(job) ?? null}
            onLoad={() => props.onLoadResult?.(job)}
          />
        )}
        {props.outputs && (
          // reloaded when the job's status changes, not on the row's "Deleting" (a
          // job being deleted has no outputs to ask for: the request met its 404)
          <JobOutputs
            name={job.name}
            status={job.status_text ?? job.status}
            load={props.outputs}
            fileUrl={props.fileUrl}
          />
        )}
      </div>
      {said && (
        <div
          className={`kale-ext-JobRow-message kale-ext-mod-${said.kind}`}
          role={said.kind === 'error' ? 'alert' : 'status'}
        >
          {said.text}{' '}
          {props.onDismiss && (
            <Button
              kind="link"
              aria-label={`Dismiss the message of ${job.name}`}
              onClick={() => props.onDismiss?.(job.name)}
            >
              Dismiss
            </Button>
          )}
        </div>
      )}
    </div>
  );
}

/**
 * A job's lineage and last checkpoint in its row: ` · resumed from
 * first-x, step 12` and, while it runs, ` · checkpoint: step 14, 3m ago`.
 */
export function lineageText(job: Kale.IJobInfo, now: number): string {
  let text = '';
  if (job.parent) {
    const step =
      typeof job.resume_step === 'number' ? `, step ${job.resume_step}` : '';
    const lineage =
      job.lineage && job.lineage !== job.parent
        ? ` (lineage ${job.lineage})`
        : '';
    text += ` · resumed from ${job.parent}${lineage}${step}`;
  }
  const saved = job.checkpoint;
  if (saved && job.status === 'Running') {
    const age = timeAgo(saved.time, now);
    const when = age ? `, ${saved.exact ? '' : 'as of '}${age}` : '';
    text += ` · checkpoint: step ${saved.step}${when}`;
  }
  return text;
}
