import type { JSONValue } from '@lumino/coreutils';
import * as React from 'react';

import type { ISweepForm } from '../../form/sweep';
import { formatParameter } from '../../form/values';
import { Button, TextField, errorOf } from '../shared/fields';
import type { IFormProps } from '../form/job-form';
import { SWEEP_HINT, SweepSettings } from './sweep-fields';

/**
 * The notebook's parameters (its `parameters` cells), with their defaults;
 * a changed value is sent as `options.parameters`, an empty field is not
 * (the default is used).
 */
export function ParametersEditor(
  props: IFormProps & {
    /** The parameters and their defaults; undefined when not known. */
    defaults: { [name: string]: JSONValue } | undefined;
    /** The notebook does not compile now: where the defaults are from. */
    state: 'checking' | 'known' | 'stale' | 'unreadable';
    /** The sweep: a swept parameter takes a list or a range. */
    sweep?: ISweepForm;
    onSweep?: (change: Partial<ISweepForm>) => void;
  }
): JSX.Element {
  const { form, errors, onChange, state, sweep, onSweep } = props;
  const defaults = props.defaults ?? {};
  const names = [
    ...Object.keys(defaults),
    ...Object.keys(form.parameters).filter(k => !(k in defaults))
  ];
  const set = (name: string, text: string | null) => {
    const parameters = { ...form.parameters };
    if (
      text === null ||
      (name in defaults && text === formatParameter(defaults[name]))
    ) {
      delete parameters[name];
    } else {
      parameters[name] = text;
    }
    onChange({ parameters });
  };
  const note =
    state === 'unreadable' ? (
      <p className="kale-ext-Muted" role="note">
        Cannot read the parameters: the notebook does not compile (see Checks).
      </p>
    ) : state === 'stale' ? (
      <p className="kale-ext-Muted" role="note">
        The notebook does not compile now: these are its parameters as of the
        last check that compiled.
      </p>
    ) : null;
  if (names.length === 0) {
    return (
      note ?? (
        <p className="kale-ext-Muted">
          {state === 'checking' ? (
            'Reading the parameters…'
          ) : (
            <>
              No parameters: tag a cell of literal assignments{' '}
              <code>parameters</code>.
            </>
          )}
        </p>
      )
    );
  }
  return (
    <div className="kale-ext-List">
      {note}
      {names.map(name => {
        const known = name in defaults;
        const value = form.parameters[name] ?? formatParameter(defaults[name]);
        const swept = sweep?.params[name];
        const toggle = sweep && onSweep && (
          <Button
            kind="link"
            className="kale-ext-SweepToggle"
            aria-pressed={swept !== undefined}
            aria-label={`Sweep ${name}`}
            title="Try several values: a list or a range, a job each"
            onClick={() => {
              const params = { ...sweep.params };
              if (swept === undefined) {
                params[name] = value;
              } else {
                delete params[name];
              }
              onSweep({ params });
            }}
          >
            Sweep
          </Button>
        );
        if (swept !== undefined && onSweep) {
          return (
            <div key={name} className="kale-ext-ParamRow kale-ext-mod-swept">
              <TextField
                label={`${name} (sweep)`}
                name={`sweep.${name}`}
                ariaLabel={`Sweep values of ${name}`}
                value={swept}
                hint={SWEEP_HINT}
                error={errorOf(errors, `sweep.${name}`)}
                onChange={text =>
                  onSweep({ params: { ...sweep!.params, [name]: text } })
                }
              />
              {toggle}
            </div>
          );
        }
        return (
          <div key={name} className="kale-ext-ParamRow">
            <TextField
              label={name}
              name={`parameters.${name}`}
              ariaLabel={`Parameter ${name}`}
              value={value}
              placeholder={known ? formatParameter(defaults[name]) : undefined}
              hint={
                !known
                  ? 'not in the notebook'
                  : value.trim() === ''
                    ? `empty: the default ${JSON.stringify(defaults[name])} is used`
                    : `default ${JSON.stringify(defaults[name])}`
              }
              error={errorOf(errors, `parameters.${name}`)}
              onChange={text => set(name, text)}
            />
            {(name in form.parameters || !known) && (
              <Button
                kind="link"
                aria-label={known ? `Reset ${name}` : `Remove ${name}`}
                onClick={() => set(name, null)}
              >
                {known ? 'Reset' : 'Remove'}
              </Button>
            )}
            {known && toggle}
          </div>
        );
      })}
      {sweep && onSweep && Object.keys(sweep.params).length > 0 && (
        <SweepSettings sweep={sweep} errors={errors} onChange={onSweep} />
      )}
    </div>
  );
}
