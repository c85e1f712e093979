import * as React from 'react';

import { chartLayout } from '../metrics/chart';
import { describeMetric, formatValue, seriesClass } from '../metrics/format';
import type { IMetric, MetricsStore } from '../metrics/store';

/**
 * One small chart per metric, as the job reports them.
 */
export function MetricsPane(props: {
  store: MetricsStore;
  version: number;
}): JSX.Element {
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
  return (
    <div className="kale-ext-Metrics" role="list" aria-label="Metrics">
      {metrics.map(m => (
        <MetricChart key={m.name} metric={m} version={m.version} />
      ))}
    </div>
  );
}

/**
 * A line chart of one metric: x = step, a line per rank in its rank's
 * colour (the same as its log lines'), the latest values below.
 */
function MetricChartView(props: {
  metric: IMetric;
  /** Changes when the metric does (the metric object is updated in place). */
  version: number;
}): JSX.Element {
  const { metric, version } = props;
  const layout = React.useMemo(() => chartLayout(metric), [metric, version]);
  const label = describeMetric(metric);
  const { size } = layout;
  const series = [...metric.series.values()];
  const plotRight = size.width - size.right;
  const plotBottom = size.height - size.bottom;
  return (
    <figure
      className="kale-ext-Metric"
      role="listitem"
      data-metric={metric.name}
    >
      <figcaption className="kale-ext-Metric-name">{metric.name}</figcaption>
      <svg
        className="kale-ext-Metric-chart"
        role="img"
        aria-label={label}
        width={size.width}
        height={size.height}
        viewBox={`0 0 ${size.width} ${size.height}`}
      >
        <g className="kale-ext-Metric-grid" aria-hidden="true">
          {layout.yTicks.map(t => (
            <g key={`y${t.label}`}>
              <line x1={size.left} x2={plotRight} y1={t.y} y2={t.y} />
              <text x={size.left - 4} y={t.y} textAnchor="end" dy="0.32em">
                {t.label}
              </text>
            </g>
          ))}
          {layout.xTicks.map(t => (
            <text
              key={`x${t.label}`}
              x={t.x}
              y={plotBottom + 12}
              textAnchor="middle"
            >
              {t.label}
            </text>
          ))}
          <line
            className="kale-ext-Metric-axis"
            x1={size.left}
            x2={plotRight}
            y1={plotBottom}
            y2={plotBottom}
          />
        </g>
        {layout.lines.map(line => (
          <g
            key={line.rank}
            className={`kale-ext-Metric-series ${seriesClass(line.rank)}`}
            data-rank={line.rank}
            data-points={line.drawn}
          >
            {line.drawn > 1 && <path d={line.d} />}
            {line.last && <circle cx={line.last.x} cy={line.last.y} r={2.5} />}
          </g>
        ))}
      </svg>
      <ul className="kale-ext-Metric-legend">
        {series.map(s => (
          <li key={s.rank} className={seriesClass(s.rank)} data-rank={s.rank}>
            <span className="kale-ext-Metric-swatch" aria-hidden="true" />
            rank {s.rank}{' '}
            <span className="kale-ext-Metric-value">
              {formatValue(s.latest.value)}
            </span>{' '}
            <span className="kale-ext-Muted">step {s.latest.step}</span>
          </li>
        ))}
      </ul>
    </figure>
  );
}

const MetricChart = React.memo(MetricChartView);
