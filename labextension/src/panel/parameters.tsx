import type { JSONValue } from '@lumino/coreutils';
import * as React from 'react';

import { formatParameter } from '../form/values';
import { Button, TextField, errorOf } from './fields';
import type { IFormProps } from './job-form';

/**
 * The notebook's parameters (its `parameters` cells), with their defaults;
 * a changed value is sent as `options.parameters`.
 */
export function ParametersEditor(
  props: IFormProps & {
    /** The parameters and their defaults; undefined when not known. */
    defaults: { [name: string]: JSONValue } | undefined;
    /** The notebook does not compile now: where the defaults are from. */
    state: 'checking' | 'known' | 'stale' | 'unreadable';
  }
): JSX.Element {
  const { form, errors, onChange, state } = props;
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
        return (
          <div key={name} className="kale-ext-ParamRow">
            <TextField
              label={name}
              name={`parameters.${name}`}
              ariaLabel={`Parameter ${name}`}
              value={value}
              hint={
                known
                  ? `default ${JSON.stringify(defaults[name])}`
                  : 'not in the notebook'
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
          </div>
        );
      })}
    </div>
  );
}
