import type { FinalMetrics } from '../panel/jobs/jobs-view';
import { LiveMetrics } from '../panel/jobs/live-metrics';
import type { Kale } from '../types';
import { jobInfo } from './fakes';

function running(name: string): Kale.IJobInfo {
  return jobInfo(name, {}, { status: 'Running', finished: null });
}

const metrics = (value: number, step: number): FinalMetrics =>
  new Map([['loss', { value, step }]]);

/** A read that answers when told to, and what was asked. */
function reads() {
  const asked: string[] = [];
  const pending: ((m: FinalMetrics) => void)[] = [];
  return {
    asked,
    read: (name: string) => {
      asked.push(name);
      return new Promise<FinalMetrics>(resolve => pending.push(resolve));
    },
    async answer(m: FinalMetrics): Promise<void> {
      pending.shift()!(m);
      await new Promise(resolve => setTimeout(resolve, 0));
    }
  };
}

/** A LiveMetrics on ``r``'s reads, at time ``now()``, nothing told of changes. */
function quiet(
  r: ReturnType<typeof reads>,
  now: () => number,
  more: Partial<ConstructorParameters<typeof LiveMetrics>[0]> = {}
): LiveMetrics {
  return new LiveMetrics({
    read: r.read,
    changed: () => undefined,
    now,
    ...more
  });
}

describe('the latest metrics of running jobs', () => {
  it('reads each running job one at a time, again once the interval has passed', async () => {
    let now = 0;
    const r = reads();
    const changed = jest.fn();
    const live = new LiveMetrics({
      read: r.read,
      changed,
      interval: 5000,
      now: () => now
    });
    const jobs = [running('a'), jobInfo('done', {}), running('b')];
    live.want(jobs);
    expect(r.asked).toEqual(['a']); // one at a time; an ended job not at all
    await r.answer(metrics(0.9, 1));
    expect(r.asked).toEqual(['a', 'b']);
    await r.answer(metrics(0.8, 1));
    expect(live.get('a')).toEqual(metrics(0.9, 1));
    expect(live.get('b')).toEqual(metrics(0.8, 1));
    expect(live.get('done')).toBeUndefined();
    expect(changed).toHaveBeenCalledTimes(2);

    live.want(jobs); // too soon
    expect(r.asked).toHaveLength(2);
    now = 5000;
    live.want(jobs);
    expect(r.asked).toEqual(['a', 'b', 'a']);
    await r.answer(metrics(0.5, 3));
    expect(live.get('a')).toEqual(metrics(0.5, 3)); // the newer value
    // a read whose lines held no metric keeps the last one found
    await r.answer(new Map());
    expect(live.get('b')).toEqual(metrics(0.8, 1));
    live.dispose();
  });

  it('reads the first maxJobs running jobs only, and forgets a job that ended', async () => {
    const r = reads();
    const live = quiet(r, () => 0, { maxJobs: 1 });
    live.want([running('a'), running('b')]);
    await r.answer(metrics(1, 1));
    expect(r.asked).toEqual(['a']);
    expect(live.get('a')).toBeDefined();
    live.want([jobInfo('a', {}), running('b')]); // a ended: its final metrics show
    expect(live.get('a')).toBeUndefined();
    expect(r.asked).toEqual(['a', 'b']);
    live.dispose();
  });

  it('stops reading a job being deleted, and reads it again if the delete failed', async () => {
    const r = reads();
    let now = 0;
    const live = quiet(r, () => now);
    live.want([running('a')]);
    const forgotten = live.forget('a');
    await r.answer(metrics(1, 1)); // the read on its way ends
    await forgotten;
    expect(live.get('a')).toBeUndefined();
    now = 10_000;
    live.want([running('a')]);
    expect(r.asked).toEqual(['a']); // not asked again
    live.unforget('a');
    now = 20_000;
    live.want([running('a')]);
    expect(r.asked).toEqual(['a', 'a']);
    live.dispose();
  });

  it('remembers the last maxForgotten deleted jobs only', async () => {
    const r = reads();
    const live = quiet(r, () => 0, { maxForgotten: 2 });
    for (const name of ['a', 'b', 'c']) {
      await live.forget(name);
    }
    // a list asked for before the deletes still holds them: the two
    // deleted last stay unread, the oldest is no longer remembered
    live.want([running('b'), running('c'), running('a')]);
    expect(r.asked).toEqual(['a']);
    live.dispose();
  });
});
