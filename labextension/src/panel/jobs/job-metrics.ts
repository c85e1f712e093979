import type { KaleService } from '../../api';
import { MetricsStore } from '../../metrics/store';
import { EndedJobs } from './ended-jobs';
import type { FinalMetrics } from './jobs-view';

/**
 * Lines read from the end of each node's log for a job's final metrics.
 */
const TAIL = 200;

/**
 * The final metrics of ended jobs, read once each from the end of their
 * logs (`logs?follow=0&tail=200`), one job at a time (EndedJobs).
 */
export class FinalMetricsCache extends EndedJobs<FinalMetrics> {
  constructor(options: FinalMetricsCache.IOptions) {
    super({
      changed: options.changed,
      maxJobs: options.maxJobs,
      ended: job => job.status === 'Complete' || job.status === 'Failed',
      read: (job, signal) => readMetrics(options.service, job.name, signal)
    });
  }
}

export namespace FinalMetricsCache {
  export interface IOptions {
    service: KaleService;
    /** Called when a job's metrics were read. */
    changed: () => void;
    /** Jobs remembered at most (default 500). */
    maxJobs?: number;
  }
}

/**
 * A job's metrics as the end of its logs has them (its last values); none
 * when they cannot be read (deleted meanwhile).
 */
export async function readMetrics(
  service: KaleService,
  name: string,
  signal: AbortSignal
): Promise<FinalMetrics> {
  const store = new MetricsStore();
  try {
    await service.streamLogs(name, {
      follow: false,
      tail: TAIL,
      signal,
      onLines: lines => store.push(lines),
      retryDelay: () => 1000
    });
  } catch {
    // unreadable (deleted meanwhile): no metrics
  }
  return Private.final(store);
}

namespace Private {
  /**
   * Each metric's last value: rank 0's, else the lowest rank's.
   */
  export function final(store: MetricsStore): FinalMetrics {
    const out: FinalMetrics = new Map();
    for (const metric of store.metrics) {
      const first = [...metric.series.values()][0];
      if (first) {
        out.set(metric.name, {
          value: first.latest.value,
          step: first.latest.step
        });
      }
    }
    return out;
  }
}
