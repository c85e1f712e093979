import { ReactWidget } from '@jupyterlab/ui-components';
import type { Message } from '@lumino/messaging';
import { Signal } from '@lumino/signaling';
import * as React from 'react';

import type { KaleService } from '../api';
import { errorMessage } from '../errors';
import { MetricChart } from '../logs/metric-chart';
import { seriesClass } from '../metrics/format';
import type { MetricsStore } from '../metrics/store';
import type { FinalMetrics } from '../panel/jobs/jobs-view';
import type { Kale } from '../types';
import { CompareCurves } from './curves';
import { compareJobs, ICompareSection, sourceChanged } from './model';

/**
 * Two or more jobs side by side in a main-area tab: what differs between
 * them marked, and each metric's curves on one plot, a line per job.
 */
export class CompareView extends ReactWidget {
  constructor(options: CompareView.IOptions) {
    super();
    this.service = options.service;
    this.names = options.names;
    this._openLogs = options.openLogs;
    this.addClass('kale-ext-Compare');
    this.id = `kale-ext-compare-${options.names.join('-')}`;
    this.title.label = `Compare ${options.names.length} jobs`;
    this.title.caption = `Compare ${options.names.join(', ')}`;
    this.title.closable = true;
    this.curves = new CompareCurves({
      service: options.service,
      jobs: options.names,
      changed: () => this._changed()
    });
  }

  readonly service: KaleService;
  /** The compared jobs, in order. */
  readonly names: string[];
  readonly curves: CompareCurves;
  /** The jobs as last read (null until then; a job gone: undefined). */
  jobs: (Kale.IJobInfo | undefined)[] | null = null;
  error = '';
  /** The unified diffs of the generated function, where it changed. */
  sourceDiffs: Kale.IComparison['source_diffs'] = [];
  /** Show only the rows that differ. */
  onlyDifferences = false;
  readonly stateChanged = new Signal<this, void>(this);

  /**
   * Read the jobs and their logs again.
   */
  async load(): Promise<void> {
    this.error = '';
    try {
      this.jobs = await Promise.all(
        this.names.map(name => this.service.getJob(name).catch(() => undefined))
      );
    } catch (reason) {
      this.error = errorMessage(reason);
    }
    try {
      this.sourceDiffs = (await this.service.diffJobs(this.names)).source_diffs;
    } catch {
      this.sourceDiffs = []; // (a job gone: the table says so)
    }
    this._changed();
    await this.curves.load();
  }

  openLogs(name: string): void {
    this._openLogs?.(name);
  }

  setOnlyDifferences(on: boolean): void {
    this.onlyDifferences = on;
    this._changed();
  }

  dispose(): void {
    this.curves.dispose();
    super.dispose();
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    if (this.jobs === null) {
      void this.load();
    }
  }

  protected render(): JSX.Element {
    return <CompareRoot view={this} />;
  }

  private _changed(): void {
    this.stateChanged.emit();
    this.update();
  }

  private _openLogs?: (name: string) => void;
}

export namespace CompareView {
  export interface IOptions {
    service: KaleService;
    names: string[];
    openLogs?: (name: string) => void;
  }
}

/**
 * A job's final metrics from its metrics store (rank 0's last values).
 */
export function finalMetrics(store: MetricsStore): FinalMetrics {
  const out: FinalMetrics = new Map();
  for (const metric of store.metrics) {
    const ranks = [...metric.series.values()].sort((a, b) => a.rank - b.rank);
    if (ranks[0]) {
      out.set(metric.name, {
        value: ranks[0].latest.value,
        step: ranks[0].latest.step
      });
    }
  }
  return out;
}

function CompareRoot(props: { view: CompareView }): JSX.Element {
  const { view } = props;
  const [logScale, setLogScale] = React.useState<Record<string, boolean>>({});
  const known = (view.jobs ?? []).filter(
    (j): j is Kale.IJobInfo => j !== undefined
  );
  const gone = view.jobs
    ? view.names.filter((_, i) => view.jobs![i] === undefined)
    : [];
  const sections = compareJobs(known, {
    now: Date.now(),
    metrics: name => {
      const i = view.names.indexOf(name);
      return view.curves.done || view.curves.stores[i]?.metrics.length
        ? finalMetrics(view.curves.stores[i])
        : undefined;
    }
  });
  const index = new Map(known.map((j, i) => [j.name, i]));
  const metrics = view.curves.metrics();
  // a line per compared job, numbered as listed (its colour)
  const labelOf = React.useCallback(
    (i: number) => view.names[i] ?? `job ${i}`,
    [view.names.join(',')]
  );
  return (
    <div className="kale-ext-CompareView">
      <header className="kale-ext-Compare-head">
        <h2>Compare {view.names.length} jobs</h2>
        <label className="kale-ext-Check">
          <input
            type="checkbox"
            checked={view.onlyDifferences}
            onChange={e => view.setOnlyDifferences(e.target.checked)}
          />{' '}
          Only what differs
        </label>
        <button
          type="button"
          className="kale-ext-Button kale-ext-Button-plain"
          onClick={() => void view.load()}
        >
          Refresh
        </button>
      </header>
      {view.error && (
        <div className="kale-ext-Field-error" role="alert">
          {view.error}
        </div>
      )}
      {gone.length > 0 && (
        <p className="kale-ext-Muted" role="note">
          Not found (deleted?): {gone.join(', ')}
        </p>
      )}
      {view.jobs === null ? (
        <p className="kale-ext-Muted">Reading the jobs…</p>
      ) : (
        <CompareTable
          jobs={known}
          sections={sections}
          only={view.onlyDifferences}
          onLogs={name => view.openLogs(name)}
        />
      )}
      {sourceChanged(known) && (
        <p className="kale-ext-Compare-source" role="note">
          The generated function differs between these jobs (their source hashes
          differ).
        </p>
      )}
      {view.sourceDiffs.map(d => (
        <details
          key={`${d.from}-${d.to}`}
          className="kale-ext-Compare-diff"
          open
        >
          <summary>
            Generated function: {d.from} → {d.to}
          </summary>
          <pre aria-label={`Diff of ${d.from} and ${d.to}`}>{d.diff}</pre>
        </details>
      ))}
      <section className="kale-ext-Compare-curves" aria-label="Metric curves">
        <h3>Metric curves</h3>
        {!view.curves.done && (
          <p className="kale-ext-Muted">Reading the jobs’ metrics…</p>
        )}
        {view.curves.done && metrics.length === 0 && (
          <p className="kale-ext-Muted">
            No metrics reported (kale_ext.report) by these jobs.
          </p>
        )}
        <div className="kale-ext-Metrics-list" role="list">
          {metrics.map(m => (
            <MetricChart
              key={m.name}
              metric={m}
              version={m.version}
              height={200}
              log={logScale[m.name] ?? false}
              onLogChange={on => setLogScale({ ...logScale, [m.name]: on })}
              labelOf={labelOf}
            />
          ))}
        </div>
      </section>
      {index.size === 0 && view.jobs !== null && (
        <p className="kale-ext-Muted">None of these jobs exists any more.</p>
      )}
    </div>
  );
}

function CompareTable(props: {
  jobs: Kale.IJobInfo[];
  sections: ICompareSection[];
  only: boolean;
  onLogs: (name: string) => void;
}): JSX.Element {
  const { jobs, sections, only } = props;
  return (
    <table className="kale-ext-CompareTable" aria-label="Compared jobs">
      <thead>
        <tr>
          <th scope="col" />
          {jobs.map((job, i) => (
            <th key={job.name} scope="col" data-job={job.name}>
              <span className={seriesClass(i)}>
                <span className="kale-ext-Metric-swatch" aria-hidden="true" />
              </span>
              {job.name}{' '}
              <button
                type="button"
                className="kale-ext-Button kale-ext-Button-link"
                aria-label={`Logs of ${job.name}`}
                onClick={() => props.onLogs(job.name)}
              >
                Logs
              </button>
            </th>
          ))}
        </tr>
      </thead>
      {sections.map(section => {
        const rows = only ? section.rows.filter(r => r.differs) : section.rows;
        if (rows.length === 0) {
          return null;
        }
        return (
          <tbody key={section.title} data-section={section.title}>
            <tr className="kale-ext-CompareTable-section">
              <th scope="rowgroup" colSpan={jobs.length + 1}>
                {section.title}
              </th>
            </tr>
            {rows.map(row => (
              <tr
                key={row.key}
                data-key={row.key}
                data-differs={row.differs}
                className={row.differs ? 'kale-ext-mod-differs' : undefined}
              >
                <th scope="row">
                  {row.label}
                  {row.differs && (
                    <span
                      className="kale-ext-Compare-mark"
                      title="differs"
                      aria-label="differs"
                    >
                      {' '}
                      ≠
                    </span>
                  )}
                </th>
                {row.values.map((v, i) => (
                  <td key={i}>
                    {v || <span className="kale-ext-Muted">—</span>}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        );
      })}
    </table>
  );
}
