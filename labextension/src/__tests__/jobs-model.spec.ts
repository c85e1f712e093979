import type { KaleService } from '../api';
import { JobsModel } from '../panel/jobs/jobs-model';
import { JobTimelines } from '../timeline';
import type { Kale } from '../types';
import { fakeService } from './fakes';
import { until } from './helpers';

function job(status: Kale.JobStatus, reason = ''): Kale.IJobInfo {
  return {
    name: 'nb-abcde',
    status,
    reason,
    backend: 'local',
    runtime: 'torch-distributed',
    num_nodes: 1,
    procs_per_node: 1,
    nodes: [
      { index: 0, state: status === 'Complete' ? 'Succeeded' : 'Running' }
    ]
  };
}

describe('JobsModel: one status for a job, wherever it was seen', () => {
  let now = 0;
  const timelines = () => new JobTimelines({ now: () => ++now });

  it("takes a status its logs view saw into the job's row", async () => {
    const service = fakeService();
    service.listJobs.mockResolvedValue([job('Running')]);
    const shared = timelines();
    const jobs = new JobsModel({
      service: service as unknown as KaleService,
      pollInterval: 1e6,
      timelines: shared
    });
    const changed = jest.fn();
    jobs.changed.connect(changed);
    jobs.setVisible(true);
    await until(() => jobs.jobs?.length === 1);
    expect(jobs.jobs![0].status).toBe('Running');

    // The logs view learns first that it ended.
    shared.observe(job('Complete'));
    expect(jobs.jobs![0].status).toBe('Complete');
    expect(changed).toHaveBeenCalled();

    // A list answered before that does not bring "Running" back.
    jobs.refresh();
    await until(() => service.listJobs.mock.calls.length >= 2);
    await until(() => !jobs.error && jobs.jobs![0].status === 'Complete');
    expect(jobs.jobs![0].status).toBe('Complete');
    jobs.dispose();
  });

  it("gives a running job's latest metric from the end of its logs, then its final one", async () => {
    const service = fakeService();
    service.listJobs.mockResolvedValue([job('Running')]);
    let loss = 0.5;
    const streamLogs = jest.fn(
      async (
        _: string,
        options: { onLines: (lines: Kale.ILogLine[]) => void }
      ) => {
        const text = `KALE_METRIC {"step": 2, "rank": 0, "loss": ${loss}}`;
        options.onLines([{ node: 0, rank: 0, text, offset: 1 }]);
        return { status: 'Running', reason: null };
      }
    );
    const jobs = new JobsModel({
      service: { ...service, streamLogs } as unknown as KaleService,
      pollInterval: 1e6
    });
    jobs.setVisible(true);
    await until(() => jobs.metricsOf('nb-abcde') !== undefined);
    expect(jobs.metricsOf('nb-abcde')!.get('loss')).toEqual({
      value: 0.5,
      step: 2
    });
    expect(streamLogs.mock.calls[0][1]).toMatchObject({
      follow: false,
      tail: 200
    });
    // it ended: its final metrics, read once
    loss = 0.25;
    service.listJobs.mockResolvedValue([job('Complete')]);
    jobs.refresh();
    await until(() => jobs.metricsOf('nb-abcde')?.get('loss')?.value === 0.25);
    jobs.dispose();
  });

  it('brings a row into view once, when asked', () => {
    const jobs = new JobsModel({
      service: fakeService() as unknown as KaleService,
      pollInterval: 1e6
    });
    jobs.reveal('nb-abcde');
    expect(jobs.revealing).toBe('nb-abcde');
    jobs.revealed();
    expect(jobs.revealing).toBeNull();
    jobs.remember('nb-abcde');
    expect(jobs.lastSubmitted).toBe('nb-abcde');
    jobs.dispose();
  });

  it('sends a delete only once no read of the job is on its way, and reads it again if the delete fails', async () => {
    const service = fakeService();
    const ended = job('Complete');
    service.listJobs.mockResolvedValue([ended]);
    const order: string[] = [];
    // the final metrics' read of the ended job: answers when it is stopped
    const streamLogs = jest.fn(
      (name: string, options: { signal: AbortSignal }) =>
        new Promise(resolve => {
          order.push(`read ${name}`);
          options.signal.addEventListener('abort', () => {
            order.push(`read ${name} stopped`);
            resolve(null);
          });
        })
    );
    const getJob = jest.fn(async () => ended);
    const jobOutputs = jest.fn(async () => ({ listed: true, files: [] }));
    service.deleteJob.mockImplementation(async (name: string) => {
      order.push(`delete ${name}`);
      throw new Error('the server is restarting');
    });
    const jobs = new JobsModel({
      service: {
        ...service,
        streamLogs,
        getJob,
        jobOutputs
      } as unknown as KaleService,
      pollInterval: 1e6
    });
    jobs.setVisible(true);
    await until(() => order.length === 1);
    await expect(jobs.delete(ended.name)).rejects.toThrow('restarting');
    // a read that met the delete would answer 404 (the browser's console)
    expect(order).toEqual([
      'read nb-abcde',
      'read nb-abcde stopped',
      'delete nb-abcde'
    ]);
    // still there: listed again, its metrics are read again
    jobs.refresh();
    await until(() => order.length === 4);
    expect(order[3]).toBe('read nb-abcde');
    jobs.dispose();
  });
});
