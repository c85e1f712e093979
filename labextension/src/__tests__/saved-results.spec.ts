import type { KaleService } from '../api';
import { JobsModel } from '../panel/jobs/jobs-model';
import { SavedResults } from '../results/saved-results';
import type { Kale } from '../types';
import { fakeService, jobInfo } from './fakes';
import { until } from './helpers';

const RESULT: Kale.IJobResult = {
  saved: true,
  format: 'torch',
  size: 812,
  reason: null
};
const NONE: Kale.IJobResult = {
  saved: false,
  format: '',
  size: 0,
  reason: 'the function returned None'
};

function outputs(files: number, listed = true): Kale.IJobOutputs {
  return {
    location: '/o',
    files: Array.from({ length: files }, (_, i) => ({
      path: `f${i}.pt`,
      size: 1
    })),
    note: null,
    listed
  };
}

function setUp(answers: Record<string, Partial<Kale.IJobInfo> | Error>) {
  const service = {
    getJob: jest.fn(async (name: string) => {
      const a = answers[name];
      if (a instanceof Error) {
        throw a;
      }
      return jobInfo(name, {}, a);
    }),
    jobOutputs: jest.fn(async (name: string) =>
      outputs(name.includes('files') ? 2 : 0, !name.includes('cluster'))
    )
  };
  const changed = jest.fn();
  const results = new SavedResults({ service, changed });
  return { service, changed, results };
}

describe('SavedResults', () => {
  it('reads what each ended job saved once, and nothing of running jobs', async () => {
    const { service, results } = setUp({
      saved: { result: RESULT },
      'none-files': { result: NONE },
      'none-cluster': { result: NONE },
      gone: new Error('404')
    });
    const ended = (name: string, status: Kale.JobStatus = 'Complete') =>
      jobInfo(name, {}, { status });
    const jobs = [
      ended('saved'),
      ended('none-files', 'Failed'),
      ended('none-cluster'),
      ended('gone'),
      ended('running', 'Running')
    ];
    results.want(jobs);
    results.want(jobs); // asked again while reading: not read twice
    await until(() => results.get('gone'));
    expect(results.get('saved')).toEqual({ result: RESULT, files: null });
    expect(results.get('none-files')).toEqual({
      result: NONE,
      files: ['f0.pt', 'f1.pt']
    });
    expect(results.get('none-cluster')).toEqual({ result: NONE, files: null });
    expect(results.get('gone')).toEqual({ result: null, files: [] });
    expect(results.get('running')).toBeUndefined();
    expect(service.getJob.mock.calls.map(c => c[0])).toEqual([
      'saved',
      'none-files',
      'none-cluster',
      'gone'
    ]);
    // outputs are asked only when no result was saved
    expect(service.jobOutputs.mock.calls.map(c => c[0])).toEqual([
      'none-files',
      'none-cluster'
    ]);
    results.want(jobs);
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(service.getJob).toHaveBeenCalledTimes(4);
  });

  it('takes the result a list entry carries without asking for the job', async () => {
    const { service, changed, results } = setUp({});
    results.want([jobInfo('listed', {}, { result: RESULT })]);
    await until(() => results.get('listed'));
    expect(results.get('listed')).toEqual({ result: RESULT, files: null });
    expect(service.getJob).not.toHaveBeenCalled();
    expect(changed).toHaveBeenCalledTimes(1);
  });

  it('stops reading once disposed', async () => {
    const { service, results } = setUp({ a: { result: RESULT } });
    results.dispose();
    results.want([jobInfo('a', {})]);
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(service.getJob).not.toHaveBeenCalled();
  });
});

describe('The jobs list', () => {
  it('reads what the jobs it lists saved once they end, and tells its view', async () => {
    const service = {
      ...fakeService(),
      streamLogs: jest.fn().mockRejectedValue(new Error('no logs here')),
      getJob: jest.fn(async (name: string) =>
        jobInfo(name, {}, { result: RESULT })
      ),
      jobOutputs: jest.fn()
    };
    service.listJobs.mockResolvedValue([
      jobInfo('nb-ended', {}),
      jobInfo('nb-running', {}, { status: 'Running', finished: null })
    ]);
    const jobs = new JobsModel({
      service: service as unknown as KaleService,
      pollInterval: 1e6
    });
    const changed = jest.fn();
    jobs.changed.connect(changed);
    jobs.setVisible(true);
    await until(() => jobs.results.get('nb-ended'));
    expect(jobs.results.get('nb-ended')).toEqual({
      result: RESULT,
      files: null
    });
    expect(jobs.results.get('nb-running')).toBeUndefined();
    expect(service.getJob.mock.calls).toEqual([
      ['nb-ended', expect.any(AbortSignal)] // stopped if the job is deleted
    ]);
    expect(changed).toHaveBeenCalled();
    jobs.dispose();
  });
});
