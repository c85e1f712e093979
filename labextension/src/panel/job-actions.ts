import { KaleAPIError, KaleService } from '../api';
import { errorMessage } from '../errors';
import type { Kale } from '../types';
import type { JobsModel } from './jobs-model';

/**
 * A message under the Submit button.
 */
export interface INotice {
  kind: 'info' | 'error';
  text: string;
  details?: string[];
  diagnostics?: Kale.IDiagnostic[];
}

/**
 * Submit a job and say how it went: its name, backend and warnings, or the
 * server's message and the diagnostics of a notebook that does not compile.
 * The jobs list remembers the request (to run it again) and refreshes.
 */
export async function submitJob(
  service: KaleService,
  jobs: JobsModel,
  body: Kale.JobRequest
): Promise<INotice> {
  try {
    const result = await service.submit(body);
    jobs.remember(result.name, body);
    jobs.refresh();
    return {
      kind: 'info',
      text: `Submitted ${result.name} (${result.backend})`,
      details: result.warnings
    };
  } catch (reason) {
    return {
      kind: 'error',
      text: errorMessage(reason),
      diagnostics: reason instanceof KaleAPIError ? reason.errors : []
    };
  }
}

/**
 * Delete a job and say how it went.
 */
export async function deleteJob(
  jobs: JobsModel,
  name: string
): Promise<INotice> {
  try {
    await jobs.delete(name);
    return { kind: 'info', text: `Deleted ${name}` };
  } catch (reason) {
    return { kind: 'error', text: errorMessage(reason) };
  }
}
