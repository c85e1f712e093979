import type { KaleService } from '../api';
import { EndedJobs } from '../panel/jobs/ended-jobs';
import type { Kale } from '../types';
import { hasEnded, ISaved } from './load-result';

/**
 * What ended jobs saved (their result, and their outputs when there is no
 * result), read once each, one job at a time (EndedJobs). A list entry that
 * carries `result` spares the `GET jobs/{name}`.
 */
export class SavedResults extends EndedJobs<ISaved> {
  constructor(options: SavedResults.IOptions) {
    super({
      changed: options.changed,
      maxJobs: options.maxJobs,
      ended: hasEnded,
      read: (job, signal) => Private.read(options.service, job, signal)
    });
  }
}

export namespace SavedResults {
  export interface IOptions {
    service: Pick<KaleService, 'getJob' | 'jobOutputs'>;
    /** Called when what a job saved was read. */
    changed: () => void;
    /** Jobs remembered at most (default 500). */
    maxJobs?: number;
  }
}

namespace Private {
  export async function read(
    service: Pick<KaleService, 'getJob' | 'jobOutputs'>,
    job: Kale.IJobInfo,
    signal: AbortSignal
  ): Promise<ISaved> {
    let result: Kale.IJobResult | null = null;
    try {
      result =
        job.result !== undefined
          ? job.result
          : ((await service.getJob(job.name, signal)).result ?? null);
    } catch {
      // unreadable (deleted meanwhile): nothing to load, not asked again
      return { result: null, files: [] };
    }
    if (result?.saved) {
      return { result, files: null };
    }
    try {
      const outputs = await service.jobOutputs(job.name, signal);
      return {
        result,
        files: outputs.listed ? outputs.files.map(f => f.path) : null
      };
    } catch {
      return { result, files: [] };
    }
  }
}
