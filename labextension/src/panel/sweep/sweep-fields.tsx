import * as React from 'react';

import { SWEEP } from '../../contract';
import type { ISweepForm } from '../../form/sweep';
import type { IFieldError } from '../../form/errors';
import { SelectField, TextField, errorOf } from '../shared/fields';

/**
 * What a swept parameter's field takes.
 */
export const SWEEP_HINT =
  'values 1e-4, 1e-3 · ranges loguniform(1e-5, 1e-1), uniform(0, 0.5), int(1, 4) · choice(a, b)';

const SEARCH_LABELS: Record<string, string> = {
  grid: 'Grid (every combination)',
  random: 'Random',
  tpe: 'TPE (Optuna)'
};

/**
 * How a sweep searches, shown once a parameter sweeps: the search, its
 * trials (random and tpe), how many run at once, the metric and goal it
 * goes by, and early stopping of bad trials. Submit then starts a sweep.
 */
export function SweepSettings(props: {
  sweep: ISweepForm;
  errors: IFieldError[];
  onChange: (change: Partial<ISweepForm>) => void;
}): JSX.Element {
  const { sweep, errors, onChange } = props;
  const grid = sweep.search === 'grid';
  return (
    <fieldset
      className="kale-ext-SweepSettings"
      aria-label="Sweep settings"
      data-search={sweep.search}
    >
      <legend>Sweep</legend>
      <p className="kale-ext-Muted">
        Submit starts a sweep: each trial is a job with one combination of the
        swept values.
      </p>
      <div className="kale-ext-Row">
        <SelectField
          label="Search"
          name="sweep.search"
          value={sweep.search}
          options={SWEEP.searches.map(s => ({
            value: s,
            label: SEARCH_LABELS[s] ?? s
          }))}
          onChange={search => onChange({ search })}
        />
        {!grid && (
          <TextField
            label="Trials"
            name="sweep.trials"
            numeric
            value={sweep.trials}
            placeholder="12"
            error={errorOf(errors, 'sweep.trials')}
            onChange={trials => onChange({ trials })}
          />
        )}
        <TextField
          label="Parallel"
          name="sweep.parallel"
          ariaLabel="Trials at once"
          numeric
          value={sweep.parallel}
          hint={`at most ${SWEEP.max_parallel}`}
          error={errorOf(errors, 'sweep.parallel')}
          onChange={parallel => onChange({ parallel })}
        />
      </div>
      {errorOf(errors, 'sweep.search') && (
        <div className="kale-ext-Field-error" role="alert">
          {errorOf(errors, 'sweep.search')}
        </div>
      )}
      <div className="kale-ext-Row">
        <TextField
          label="Metric"
          name="sweep.metric"
          ariaLabel="Sweep metric"
          value={sweep.metric}
          hint={
            sweep.metric.trim()
              ? 'a kale_ext.report metric; the best trial is marked by it'
              : 'none: trials are not ranked. Name a kale_ext.report metric (e.g. accuracy) to mark the best'
          }
          error={errorOf(errors, 'sweep.metric')}
          onChange={metric => onChange({ metric })}
        />
        <SelectField
          label="Goal"
          name="sweep.goal"
          value={sweep.goal}
          options={[
            { value: '', label: 'By its name' },
            ...SWEEP.goals.map(g => ({
              value: g,
              label: g === 'min' ? 'Lowest' : 'Highest'
            }))
          ]}
          onChange={goal => onChange({ goal })}
        />
      </div>
      <label className="kale-ext-Check">
        <input
          type="checkbox"
          checked={sweep.earlyStop}
          onChange={e => onChange({ earlyStop: e.target.checked })}
        />{' '}
        Stop bad trials early (worse than the median at a step)
      </label>
    </fieldset>
  );
}
