import * as React from 'react';

import type { Kale } from '../types';
import { shownProgress } from './progress';

/**
 * A running job's progress bar with its percent and time left; nothing for
 * a job that is not running or never reported. The hover says where the
 * progress came from.
 */
export function ProgressBar(props: {
  job: Kale.IJobInfo | null | undefined;
  now?: number;
  className?: string;
}): JSX.Element | null {
  const { job } = props;
  const shown = shownProgress(job, props.now);
  if (!job || !shown) {
    return null;
  }
  return (
    <div
      className={`kale-ext-Progress ${props.className ?? ''}`.trim()}
      role="progressbar"
      aria-label={`Progress of ${job.name}`}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={shown.value}
      aria-valuetext={shown.label}
      title={shown.title}
      data-source={shown.source}
    >
      <div className="kale-ext-Progress-track" aria-hidden="true">
        <div
          className="kale-ext-Progress-fill"
          style={{ width: `${shown.percent}%` }}
        />
      </div>
      <span className="kale-ext-Progress-label" aria-hidden="true">
        {shown.label}
      </span>
    </div>
  );
}
