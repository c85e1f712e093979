import * as React from 'react';

import { CHART_SIZE } from '../metrics/constants';
import { describeMetric, formatValue, seriesClass } from '../metrics/format';
import { IChartPrefs, loadChartPrefs, saveChartPrefs } from '../metrics/prefs';
import type { IMetric, MetricsStore } from '../metrics/store';
import { singleValue } from '../metrics/summary';
import { MetricChart } from './metric-chart';

/**
 * The metrics as the job reports them: a value reported once (per rank) as
 * a number, the others as charts as wide as the view (taller on demand,
 * remembered).
 */
export function MetricsPane(props: {
  store: MetricsStore;
  version: number;
}): JSX.Element {
  const [prefs, setPrefs] = React.useState<IChartPrefs>(loadChartPrefs);
  const update = (change: Partial<IChartPrefs>) => {
    const next = { ...prefs, ...change };
    saveChartPrefs(next);
    setPrefs(next);
  };
  const metrics = props.store.metrics;
  if (metrics.length === 0) {
    return (
      <p className="kale-ext-Muted kale-ext-Metrics-empty">
        No metrics yet. Training code reports them with{' '}
        <code>report(step=epoch, loss=loss)</code> (
        <code>from kale_ext import report</code>).
      </p>
    );
  }
  const values = metrics.filter(m => singleValue(m) !== null);
  const charts = metrics.filter(m => singleValue(m) === null);
  const height = CHART_SIZE.height * (prefs.tall ? 2 : 1);
  return (
    <div className="kale-ext-Metrics">
      {values.length > 0 && (
        <div className="kale-ext-MetricValues" role="list" aria-label="Values">
          {values.map(m => (
            <MetricValue key={m.name} metric={m} />
          ))}
        </div>
      )}
      {charts.length > 0 && (
        <>
          <div className="kale-ext-Metrics-toolbar">
            <button
              type="button"
              className="kale-ext-Metrics-taller"
              aria-pressed={prefs.tall}
              onClick={() => update({ tall: !prefs.tall })}
            >
              Taller charts
            </button>
          </div>
          <div
            className="kale-ext-MetricCharts"
            role="list"
            aria-label="Charts"
          >
            {charts.map(m => (
              <MetricChart
                key={m.name}
                metric={m}
                version={m.version}
                height={height}
                log={prefs.log.includes(m.name)}
                onLogChange={log =>
                  update({
                    log: log
                      ? [...prefs.log, m.name]
                      : prefs.log.filter(n => n !== m.name)
                  })
                }
              />
            ))}
          </div>
        </>
      )}
    </div>
  );
}

/**
 * A metric reported once (per rank), as a number: "0.97 at step 3"; the
 * mean of several ranks, each rank's value below.
 */
function MetricValue(props: { metric: IMetric }): JSX.Element {
  const { metric } = props;
  const single = singleValue(metric)!;
  const several = single.ranks.length > 1;
  return (
    <figure
      className="kale-ext-MetricValue"
      role="listitem"
      data-metric={metric.name}
    >
      <figcaption className="kale-ext-Metric-name">{metric.name}</figcaption>
      <p
        className="kale-ext-MetricValue-main"
        aria-label={describeMetric(metric)}
      >
        <span className="kale-ext-MetricValue-number">
          {formatValue(single.value)}
        </span>{' '}
        <span className="kale-ext-Muted">
          {single.step !== null && `at step ${formatValue(single.step)}`}
          {several && ` · mean of ${single.ranks.length} ranks`}
        </span>
      </p>
      {several && (
        <ul className="kale-ext-Metric-legend">
          {single.ranks.map(r => (
            <li key={r.rank} className={seriesClass(r.rank)} data-rank={r.rank}>
              <span className="kale-ext-Metric-swatch" aria-hidden="true" />
              rank {r.rank}{' '}
              <span className="kale-ext-Metric-value">
                {formatValue(r.value)}
              </span>
              {single.step === null && (
                <span className="kale-ext-Muted">
                  {' '}
                  step {formatValue(r.step)}
                </span>
              )}
            </li>
          ))}
        </ul>
      )}
    </figure>
  );
}
