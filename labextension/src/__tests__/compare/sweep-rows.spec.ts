import {
  goalIsMin,
  sortTrials,
  sweepProgress,
  trialStatusText
} from '../../compare/sweep-rows';
import type { Kale } from '../../types';

function trial(
  number: number,
  metric: number | null,
  status: Kale.TrialStatus = 'Complete',
  best = false
): Kale.ISweepTrial {
  return {
    number,
    job: `s-${number}`,
    parameters: { lr: number / 10 },
    status,
    metric,
    best
  };
}

const sweep: Kale.ISweep = {
  name: 's',
  status: 'Running',
  search: 'grid',
  parallel: 2,
  metric: 'accuracy',
  goal: 'max',
  space: [],
  best: 's-1',
  max_trials: 4,
  trials: [
    trial(0, 0.5),
    trial(1, 0.9, 'Complete', true),
    trial(2, null, 'Running'),
    trial(3, 0.1, 'Stopped')
  ]
};

describe('sortTrials', () => {
  it('puts the best first by the goal, trials without a metric last', () => {
    const order = (s: Kale.ISweep, by: 'metric' | 'number', reversed = false) =>
      sortTrials(s, { by, reversed }).map(t => t.number);
    expect(order(sweep, 'metric')).toEqual([1, 0, 3, 2]);
    expect(order(sweep, 'metric', true)).toEqual([3, 0, 1, 2]);
    expect(order({ ...sweep, goal: 'min' }, 'metric')).toEqual([3, 0, 1, 2]);
    expect(order(sweep, 'number')).toEqual([0, 1, 2, 3]);
  });

  it('goes by the metric name without a goal (a loss is lowest best)', () => {
    expect(goalIsMin({ ...sweep, goal: null, metric: 'val_loss' })).toBe(true);
    expect(goalIsMin({ ...sweep, goal: null, metric: 'accuracy' })).toBe(false);
  });

  it('says a stopped trial was stopped early, or by whom', () => {
    expect(trialStatusText('Stopped', 'stopped early: accuracy 0.1')).toBe(
      'Stopped early'
    );
    expect(trialStatusText('Stopped', 'stopped by ana at 2026-11-27')).toBe(
      'Stopped'
    );
    expect(trialStatusText('Failed', 'boom')).toBe('Failed');
  });

  it("shows the server's tally of every planned trial, and the best", () => {
    const cancelled: Kale.ISweep = {
      ...sweep,
      status: 'Cancelled',
      tally: '0 of 3 complete; 1 cancelled; 2 never started',
      best: null,
      trials: [trial(0, null, 'Cancelled')]
    };
    expect(sweepProgress(cancelled)).toBe(
      '0 of 3 complete; 1 cancelled; 2 never started'
    );
    expect(
      sweepProgress({ ...sweep, tally: '2 of 4 complete; 1 running' })
    ).toBe('2 of 4 complete; 1 running · best s-1 (lr=0.1)');
  });
});
