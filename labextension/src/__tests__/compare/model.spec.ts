import { combineMetrics } from '../../compare/curves';
import { compareJobs, ICompareRow, sourceChanged } from '../../compare/model';
import { MetricsStore } from '../../metrics/store';
import type { Kale } from '../../types';
import { jobInfo } from '../fakes';

function job(
  name: string,
  options: Kale.IJobOptions,
  extra: Partial<Kale.IJobInfo> = {}
): Kale.IJobInfo {
  const provenance = {
    'kale-ext.io/options': JSON.stringify(options),
    'kale-ext.io/notebook': 'nb.ipynb',
    'kale-ext.io/source-sha256': 'a'.repeat(64)
  };
  return jobInfo(name, provenance, extra);
}

describe('compareJobs', () => {
  it('marks the rows that differ, a value per job', () => {
    const jobs = [
      job('a', { parameters: { lr: 0.01, epochs: 2 }, cpu: '1' }),
      job('b', { parameters: { lr: 0.1 }, cpu: '1' })
    ];
    const finals = new Map([
      ['a', new Map([['loss', { value: 0.5, step: 2 }]])],
      ['b', new Map([['loss', { value: 0.25, step: 2 }]])]
    ]);
    const sections = compareJobs(jobs, {
      now: 0,
      metrics: name => finals.get(name)
    });
    const rows: Record<string, ICompareRow> = {};
    for (const section of sections) {
      for (const r of section.rows) {
        rows[r.key] = r;
      }
    }
    expect(sections.map(s => s.title)).toEqual([
      'Parameters',
      'Final metrics',
      'Resources',
      'Environment',
      'Source',
      'Run'
    ]);
    expect(rows['parameters.lr']).toMatchObject({
      values: ['0.01', '0.1'],
      differs: true
    });
    expect(rows['parameters.epochs'].values).toEqual(['2', 'default']);
    expect(rows['cpu']).toMatchObject({ values: ['1', '1'], differs: false });
    expect(rows['metrics.loss']).toMatchObject({
      values: ['0.5 (step 2)', '0.25 (step 2)'],
      differs: true
    });
    expect(rows['duration'].values).toEqual(['1m 00s', '1m 00s']);
    expect(sourceChanged(jobs)).toBe(false);
  });

  it('sees a changed generated function by its source hash', () => {
    const other = job('b', {});
    other.provenance!['kale-ext.io/source-sha256'] = 'b'.repeat(64);
    expect(sourceChanged([job('a', {}), other])).toBe(true);
  });
});

describe('combineMetrics', () => {
  it('puts each job on one plot per metric, a line each', () => {
    const line = (rank: number, step: number, loss: number) => ({
      node: 0,
      rank,
      offset: 0,
      text: `KALE_METRIC {"step": ${step}, "rank": ${rank}, "loss": ${loss}}`
    });
    const a = new MetricsStore();
    a.push([line(0, 0, 1), line(0, 1, 0.5), line(1, 0, 9)]);
    const b = new MetricsStore();
    b.push([line(0, 0, 2)]);
    const [loss] = combineMetrics([a, b]);
    expect(loss.name).toBe('loss');
    expect([...loss.series.keys()]).toEqual([0, 1]);
    expect(loss.series.get(0)!.points.map(p => p.value)).toEqual([1, 0.5]);
    expect(loss.series.get(1)!.latest.value).toBe(2);
  });
});
