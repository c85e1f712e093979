import * as React from 'react';

import { chartLayout, IChartLayout } from '../metrics/chart';
import { CHART_SIZE } from '../metrics/constants';
import { describeMetric, formatValue, seriesClass } from '../metrics/format';
import {
  describeHover,
  hoverAt,
  hoverSteps,
  IHover,
  stepNear
} from '../metrics/hover';
import type { IMetric } from '../metrics/store';
import { bestPoint, meanSeries } from '../metrics/summary';

/**
 * A line chart of one metric: x = step, a line per rank in its rank's
 * colour (the same as its log lines') and their mean dotted, as wide as
 * its place; a crosshair with each line's value under the pointer or the
 * arrow keys; a log scale toggle; the last and best values below.
 */
function MetricChartView(props: {
  metric: IMetric;
  /** Changes when the metric does (the metric object is updated in place). */
  version: number;
  height: number;
  log: boolean;
  onLogChange: (log: boolean) => void;
  /**
   * Lines that are not ranks (a job each, to compare them): each line's
   * name, and no mean drawn.
   */
  labelOf?: (rank: number) => string;
}): JSX.Element {
  const { metric, version, height, log, labelOf } = props;
  const who = (rank: number | null) =>
    rank === null ? 'mean' : labelOf ? labelOf(rank) : `rank ${rank}`;
  const box = React.useRef<HTMLDivElement>(null);
  const width = useWidth(box, CHART_SIZE.width);
  const layout = React.useMemo(() => {
    const drawn = chartLayout(
      metric,
      { ...CHART_SIZE, width, height },
      { scale: log ? 'log' : 'linear' }
    );
    return labelOf ? { ...drawn, mean: null } : drawn;
  }, [metric, version, width, height, log, labelOf]);
  const steps = React.useMemo(() => hoverSteps(metric), [metric, version]);
  const [step, setStep] = React.useState<number | null>(null);
  const hover = step === null ? null : hoverAt(metric, layout, step);
  const tipId = `kale-ext-metric-tip-${React.useId().replace(/:/g, '')}`;

  const onKey = (event: React.KeyboardEvent) => {
    const i = step === null ? steps.length - 1 : steps.indexOf(step);
    const to: Record<string, number> = {
      ArrowLeft: Math.max(0, i - 1),
      ArrowRight: Math.min(steps.length - 1, i + 1),
      Home: 0,
      End: steps.length - 1
    };
    if (event.key === 'Escape') {
      setStep(null);
    } else if (event.key in to && steps.length) {
      event.preventDefault();
      setStep(steps[to[event.key]]);
    }
  };
  const onPointer = (event: React.PointerEvent<SVGSVGElement>) => {
    const rect = event.currentTarget.getBoundingClientRect();
    setStep(stepNear(steps, layout, event.clientX - rect.left));
  };
  return (
    <figure
      className="kale-ext-Metric"
      role="listitem"
      data-metric={metric.name}
      data-scale={layout.scale}
    >
      <div className="kale-ext-Metric-head">
        <figcaption className="kale-ext-Metric-name">{metric.name}</figcaption>
        <button
          type="button"
          className="kale-ext-Metric-log"
          aria-pressed={log}
          aria-label={`Log scale of ${metric.name}`}
          title="A log y axis: a curve that flattens stays readable"
          onClick={() => props.onLogChange(!log)}
        >
          Log scale
        </button>
      </div>
      {layout.note && (
        <p className="kale-ext-Metric-note" role="status">
          {layout.note}
        </p>
      )}
      <div className="kale-ext-Metric-plot" ref={box}>
        <svg
          className="kale-ext-Metric-chart"
          role="img"
          tabIndex={0}
          aria-label={describeMetric(metric)}
          aria-describedby={tipId}
          width={layout.size.width}
          height={layout.size.height}
          viewBox={`0 0 ${layout.size.width} ${layout.size.height}`}
          onPointerMove={onPointer}
          onPointerLeave={() => setStep(null)}
          onFocus={() => setStep(s => s ?? steps[steps.length - 1] ?? null)}
          onBlur={() => setStep(null)}
          onKeyDown={onKey}
        >
          <ChartGrid layout={layout} />
          {layout.lines.map(line => (
            <g
              key={line.rank}
              className={`kale-ext-Metric-series ${seriesClass(line.rank!)}`}
              data-rank={line.rank}
              data-label={labelOf ? who(line.rank) : undefined}
              data-points={line.drawn}
            >
              {line.drawn > 1 && <path d={line.d} />}
              {line.last && (
                <circle cx={line.last.x} cy={line.last.y} r={2.5} />
              )}
            </g>
          ))}
          {layout.mean && (
            <g
              className="kale-ext-Metric-series kale-ext-Metric-mean"
              data-rank="mean"
              data-points={layout.mean.drawn}
            >
              {layout.mean.drawn > 1 && <path d={layout.mean.d} />}
            </g>
          )}
          {hover && <Crosshair hover={hover} layout={layout} />}
        </svg>
        <div
          id={tipId}
          className="kale-ext-Metric-tooltip"
          role="status"
          hidden={!hover}
          style={
            hover
              ? hover.x > layout.size.width / 2
                ? { right: layout.size.width - hover.x + 8 }
                : { left: hover.x + 8 }
              : undefined
          }
        >
          {hover && <HoverValues hover={hover} who={who} />}
        </div>
      </div>
      <Legend metric={metric} who={who} mean={!labelOf} />
    </figure>
  );
}

export const MetricChart = React.memo(MetricChartView);

function ChartGrid(props: { layout: IChartLayout }): JSX.Element {
  const { layout } = props;
  const { size } = layout;
  const right = size.width - size.right;
  const bottom = size.height - size.bottom;
  return (
    <g className="kale-ext-Metric-grid" aria-hidden="true">
      {layout.yTicks.map(t => (
        <g key={`y${t.label}`}>
          <line x1={size.left} x2={right} y1={t.y} y2={t.y} />
          <text x={size.left - 4} y={t.y} textAnchor="end" dy="0.32em">
            {t.label}
          </text>
        </g>
      ))}
      {layout.xTicks.map(t => (
        <text key={`x${t.label}`} x={t.x} y={bottom + 12} textAnchor="middle">
          {t.label}
        </text>
      ))}
      <line
        className="kale-ext-Metric-axis"
        x1={size.left}
        x2={right}
        y1={bottom}
        y2={bottom}
      />
    </g>
  );
}

function Crosshair(props: {
  hover: IHover;
  layout: IChartLayout;
}): JSX.Element {
  const { hover, layout } = props;
  return (
    <g className="kale-ext-Metric-crosshair" aria-hidden="true">
      <line
        x1={hover.x}
        x2={hover.x}
        y1={layout.size.top}
        y2={layout.size.height - layout.size.bottom}
      />
      {hover.values.map(v => (
        <circle
          key={v.rank ?? 'mean'}
          className={
            v.rank === null ? 'kale-ext-Metric-mean' : seriesClass(v.rank)
          }
          cx={v.x}
          cy={v.y}
          r={3.5}
        />
      ))}
    </g>
  );
}

function HoverValues(props: {
  hover: IHover;
  who: (rank: number | null) => string;
}): JSX.Element {
  const { hover, who } = props;
  return (
    <>
      <span className="kale-ext-VisuallyHidden">
        {describeHover(hover, who)}
      </span>
      <div className="kale-ext-Metric-tooltipStep" aria-hidden="true">
        step {formatValue(hover.step)}
      </div>
      <ul aria-hidden="true">
        {hover.values.map(v => (
          <li
            key={v.rank ?? 'mean'}
            className={
              v.rank === null ? 'kale-ext-Metric-mean' : seriesClass(v.rank)
            }
          >
            <span className="kale-ext-Metric-swatch" />
            {who(v.rank)}{' '}
            <span className="kale-ext-Metric-value">
              {formatValue(v.value)}
            </span>
            {v.step !== hover.step && (
              <span className="kale-ext-Muted">
                {' '}
                step {formatValue(v.step)}
              </span>
            )}
          </li>
        ))}
      </ul>
    </>
  );
}

/**
 * Each line's last and best value (best: lowest for a loss or an error,
 * highest otherwise).
 */
function Legend(props: {
  metric: IMetric;
  who: (rank: number | null) => string;
  /** Whether the ranks' mean has a row. */
  mean: boolean;
}): JSX.Element {
  const { metric, who } = props;
  const rows = [...metric.series.values()].map(s => ({
    key: String(s.rank),
    label: who(s.rank),
    className: seriesClass(s.rank),
    last: s.latest,
    best: bestPoint(metric.name, s.points)
  }));
  const mean = props.mean ? meanSeries(metric) : [];
  if (mean.length) {
    rows.push({
      key: 'mean',
      label: 'mean',
      className: 'kale-ext-Metric-mean',
      last: mean[mean.length - 1],
      best: bestPoint(metric.name, mean)
    });
  }
  const at = (p: { step: number; value: number } | null) =>
    p ? (
      <>
        <span className="kale-ext-Metric-value">{formatValue(p.value)}</span>{' '}
        <span className="kale-ext-Muted">step {formatValue(p.step)}</span>
      </>
    ) : (
      '–'
    );
  return (
    <ul className="kale-ext-Metric-legend">
      {rows.map(row => (
        <li key={row.key} className={row.className} data-rank={row.key}>
          <span className="kale-ext-Metric-swatch" aria-hidden="true" />
          <span className="kale-ext-Metric-who">{row.label}</span>
          <span className="kale-ext-Metric-last">last {at(row.last)}</span>
          <span className="kale-ext-Metric-best">best {at(row.best)}</span>
        </li>
      ))}
    </ul>
  );
}

/**
 * An element's content width, followed as it resizes (`initial` until
 * measured).
 */
function useWidth(ref: React.RefObject<HTMLElement>, initial: number): number {
  const [width, setWidth] = React.useState(initial);
  React.useEffect(() => {
    const node = ref.current;
    if (!node || typeof ResizeObserver === 'undefined') {
      return;
    }
    const measure = () => {
      const w = Math.floor(node.clientWidth);
      if (w > 0) {
        setWidth(Math.max(160, w));
      }
    };
    const observer = new ResizeObserver(measure);
    observer.observe(node);
    measure();
    return () => observer.disconnect();
  }, [ref]);
  return width;
}
