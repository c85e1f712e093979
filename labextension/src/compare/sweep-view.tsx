import { Dialog, showDialog } from '@jupyterlab/apputils';
import { ReactWidget } from '@jupyterlab/ui-components';
import type { Message } from '@lumino/messaging';
import { Poll } from '@lumino/polling';
import * as React from 'react';

import type { KaleService } from '../api';
import { errorMessage } from '../errors';
import { formatValue } from '../metrics/format';
import type { Kale } from '../types';
import {
  DEFAULT_TRIAL_SORT,
  ITrialSort,
  TrialSort,
  canCancel,
  cancelText,
  goalIsMin,
  sortTrials,
  sweepProgress,
  trialParameters,
  trialStatusText
} from './sweep-rows';

/**
 * Statuses of a sweep that does not change any more.
 */
const ENDED = ['Complete', 'Failed', 'Interrupted', 'Cancelled'];

/**
 * A sweep in a main-area tab: its trials as a table sortable by the
 * metric, the best marked, each trial's status (stopped early shown as
 * such) and a click to its logs; followed until the sweep ends.
 */
export class SweepView extends ReactWidget {
  constructor(options: SweepView.IOptions) {
    super();
    this.service = options.service;
    this.sweepName = options.name;
    this._options = options;
    this.addClass('kale-ext-SweepTab');
    this.id = `kale-ext-sweep-${options.name}`;
    this.title.label = `Sweep: ${options.name}`;
    this.title.caption = `kale_ext sweep ${options.name}: its trials`;
    this.title.closable = true;
    this._poll = new Poll({
      factory: () => this._refresh(),
      frequency: {
        interval: options.pollInterval ?? 2000,
        backoff: true,
        max: 30000
      },
      standby: 'when-hidden',
      name: `kale-ext:sweep:${options.name}`,
      auto: false
    });
  }

  readonly service: KaleService;
  readonly sweepName: string;
  sweep: Kale.ISweep | null = null;
  error = '';
  sort: ITrialSort = DEFAULT_TRIAL_SORT;
  /** Whether a cancel is on its way. */
  cancelling = false;
  /** Why the last cancel failed (the server's message), or ''. */
  cancelError = '';

  setSort(by: TrialSort): void {
    this.sort =
      this.sort.by === by
        ? { by, reversed: !this.sort.reversed }
        : { by, reversed: false };
    this.update();
  }

  openLogs(job: string): void {
    this._options.openLogs?.(job);
  }

  compare(jobs: string[]): void {
    this._options.compare?.(jobs);
  }

  refresh(): void {
    void this._poll.refresh();
  }

  /**
   * Cancel the sweep, after asking: no more trials start, the running
   * ones are stopped and kept. Returns whether it was cancelled.
   */
  async cancel(): Promise<boolean> {
    const sweep = this.sweep;
    if (!sweep || this.cancelling || !canCancel(sweep)) {
      return false;
    }
    const confirm = this._options.confirm ?? Private.confirm;
    if (!(await confirm(sweep.name, cancelText(sweep)))) {
      return false;
    }
    this.cancelling = true;
    this.cancelError = '';
    this.update();
    try {
      this.sweep = await this.service.cancelSweep(sweep.name);
    } catch (reason) {
      this.cancelError = errorMessage(reason);
    }
    this.cancelling = false;
    this.update();
    const cancelled = this.cancelError === '';
    if (cancelled && !this._poll.isDisposed) {
      // Follow it until its stopped trials read Cancelled.
      void this._poll.start().then(() => this._poll.refresh());
    }
    return cancelled;
  }

  dispose(): void {
    this._poll.dispose();
    super.dispose();
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    void this._poll.start();
  }

  protected render(): JSX.Element {
    return <SweepRoot view={this} />;
  }

  private async _refresh(): Promise<void> {
    try {
      this.sweep = await this.service.getSweep(this.sweepName);
      this.error = '';
    } catch (reason) {
      this.error = errorMessage(reason);
      this.update();
      throw reason; // the poll backs off
    }
    this.update();
    const live = this.sweep.trials.some(
      t => t.status === 'Running' || t.status === 'Pending'
    );
    if (ENDED.includes(this.sweep.status) && !live) {
      void this._poll.stop();
    }
  }

  private _options: SweepView.IOptions;
  private _poll: Poll;
}

export namespace SweepView {
  export interface IOptions {
    service: KaleService;
    name: string;
    openLogs?: (job: string) => void;
    compare?: (jobs: string[]) => void;
    /** Ask before cancelling (a dialog by default). */
    confirm?: (name: string, text: string) => Promise<boolean>;
    pollInterval?: number;
  }
}

namespace Private {
  export async function confirm(name: string, text: string): Promise<boolean> {
    const result = await showDialog({
      title: 'Cancel sweep',
      body: text,
      buttons: [
        Dialog.cancelButton({ label: 'Keep running' }),
        Dialog.warnButton({ label: 'Cancel sweep' })
      ]
    });
    return result.button.accept;
  }
}

const HEADERS: { by: TrialSort | null; label: string }[] = [
  { by: 'number', label: 'Trial' },
  { by: null, label: 'Job' },
  { by: null, label: 'Parameters' },
  { by: 'status', label: 'Status' },
  { by: 'metric', label: 'Metric' }
];

export function SweepRoot(props: { view: SweepView }): JSX.Element {
  const { view } = props;
  const sweep = view.sweep;
  if (!sweep) {
    return (
      <div className="kale-ext-SweepView">
        {view.error ? (
          <div className="kale-ext-Field-error" role="alert">
            {view.error}
          </div>
        ) : (
          <p className="kale-ext-Muted">Reading the sweep…</p>
        )}
      </div>
    );
  }
  // no metric: nothing to sort by but the trials' own order
  const sort: ITrialSort =
    sweep.metric || view.sort.by !== 'metric'
      ? view.sort
      : { by: 'number', reversed: false };
  const trials = sortTrials(sweep, sort);
  const metric = sweep.metric ?? 'metric';
  const goal = goalIsMin(sweep) ? 'lowest' : 'highest';
  return (
    <div
      className="kale-ext-SweepView"
      data-sweep={sweep.name}
      data-status={sweep.status}
    >
      <header className="kale-ext-Compare-head">
        <h2>Sweep {sweep.name}</h2>
        <span
          className={`kale-ext-Status kale-ext-Status-${sweep.status.toLowerCase()}`}
          role="status"
        >
          {sweep.status}
        </span>
        <button
          type="button"
          className="kale-ext-Button kale-ext-Button-plain"
          disabled={sweep.trials.length < 2}
          onClick={() => view.compare(trials.map(t => t.job))}
        >
          Compare trials
        </button>
        <button
          type="button"
          className="kale-ext-Button kale-ext-Button-plain"
          disabled={!canCancel(sweep) || view.cancelling}
          title={
            canCancel(sweep)
              ? 'Start no more trials; stop the running ones and keep them'
              : `The sweep has ended (${sweep.status})`
          }
          onClick={() => void view.cancel()}
        >
          {view.cancelling ? 'Cancelling…' : 'Cancel sweep'}
        </button>
      </header>
      <p className="kale-ext-Muted">
        {sweep.search} search · {sweep.parallel} at once
        {sweep.metric ? ` · ${goal} ${sweep.metric} is best` : ''}
        {sweep.early_stop ? ' · bad trials stopped early' : ''}
      </p>
      <p className="kale-ext-SweepView-progress" role="status">
        {sweepProgress(sweep)}
      </p>
      {!sweep.metric && (
        <p className="kale-ext-SweepView-hint" role="note">
          No metric was chosen, so no trial is ranked or marked best. For the
          next sweep, name one your notebook reports with kale_ext.report (for
          example accuracy) in the panel&apos;s Metric field, or{' '}
          <code>--metric NAME</code>.
        </p>
      )}
      {sweep.reason && !sweep.reason.startsWith(sweep.tally ?? '\0') && (
        <p
          className={`kale-ext-mod-${sweep.status === 'Failed' ? 'error' : 'info'}`}
        >
          {sweep.reason}
        </p>
      )}
      {(view.error || view.cancelError) && (
        <div className="kale-ext-Field-error" role="alert">
          {view.cancelError || view.error}
        </div>
      )}
      <table
        className="kale-ext-CompareTable kale-ext-TrialTable"
        aria-label="Trials"
      >
        <thead>
          <tr>
            {HEADERS.filter(h => sweep.metric || h.by !== 'metric').map(h => {
              const label = h.by === 'metric' ? metric : h.label;
              const active = h.by !== null && sort.by === h.by;
              return (
                <th
                  key={h.label}
                  scope="col"
                  aria-sort={
                    active
                      ? sort.reversed
                        ? 'descending'
                        : 'ascending'
                      : undefined
                  }
                >
                  {h.by ? (
                    <button
                      type="button"
                      className="kale-ext-SortButton"
                      aria-label={`Sort by ${label}`}
                      onClick={() => view.setSort(h.by!)}
                    >
                      {label}
                      {active && (sort.reversed ? ' ▾' : ' ▴')}
                    </button>
                  ) : (
                    label
                  )}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>
          {trials.map(t => (
            <tr
              key={t.job}
              data-job={t.job}
              data-status={t.status}
              data-best={t.best}
              className={t.best ? 'kale-ext-mod-best' : undefined}
            >
              <td>
                {t.number}
                {t.best && (
                  <span className="kale-ext-Best" title={`best ${metric}`}>
                    {' '}
                    ★ best
                  </span>
                )}
              </td>
              <td>
                <button
                  type="button"
                  className="kale-ext-Button kale-ext-Button-link"
                  aria-label={`Logs of ${t.job}`}
                  onClick={() => view.openLogs(t.job)}
                >
                  {t.job}
                </button>
              </td>
              <td>{trialParameters(t.parameters)}</td>
              <td>
                <span
                  className={`kale-ext-Status kale-ext-Status-${t.status.toLowerCase()}`}
                >
                  {trialStatusText(t.status, t.reason)}
                </span>
                {t.reason && (
                  <div className="kale-ext-Muted kale-ext-TrialTable-reason">
                    {t.reason}
                  </div>
                )}
              </td>
              {sweep.metric && (
                <td>
                  {t.metric === null || t.metric === undefined ? (
                    '—'
                  ) : (
                    <>
                      {formatValue(t.metric)}
                      {t.step !== null && t.step !== undefined && (
                        <span className="kale-ext-Muted"> step {t.step}</span>
                      )}
                    </>
                  )}
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
