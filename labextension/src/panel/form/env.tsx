import * as React from 'react';

import { IEnvRow, emptyEnvRow } from '../../form/model';
import { Button, SelectField, TextField, errorOf } from '../shared/fields';
import type { IFormProps } from './job-form';

/**
 * Environment variables: a value, or a key of a Kubernetes Secret (sent as
 * `config.env[].valueFrom.secretKeyRef`, so the value never leaves the
 * cluster).
 */
export function EnvEditor(props: IFormProps): JSX.Element {
  const { form, errors, onChange } = props;
  const update = (i: number, change: Partial<IEnvRow>) =>
    onChange({
      env: form.env.map((row, j) => (j === i ? { ...row, ...change } : row))
    });
  return (
    <div className="kale-ext-List">
      {form.env.length === 0 && <p className="kale-ext-Muted">No variables.</p>}
      {form.env.map((row, i) => {
        const label = row.name.trim() || `variable ${i + 1}`;
        return (
          <fieldset key={i} className="kale-ext-EnvRow">
            <legend className="kale-ext-VisuallyHidden">{`Environment variable ${i + 1}`}</legend>
            <div className="kale-ext-Pair">
              <TextField
                label="Name"
                ariaLabel={`Name of environment variable ${i + 1}`}
                value={row.name}
                placeholder="NAME"
                name={`env.${i}.name`}
                error={errorOf(errors, `env.${i}.name`)}
                onChange={name => update(i, { name })}
              />
              <SelectField
                label="From"
                ariaLabel={`Source of ${label}`}
                value={row.source}
                options={[
                  { value: 'value', label: 'Value' },
                  { value: 'secret', label: 'Secret key' }
                ]}
                onChange={source =>
                  update(i, { source: source as IEnvRow['source'] })
                }
              />
            </div>
            {row.source === 'value' ? (
              <TextField
                label="Value"
                ariaLabel={`Value of ${label}`}
                value={row.value}
                onChange={value => update(i, { value })}
              />
            ) : (
              <div className="kale-ext-Pair">
                <TextField
                  label="Secret"
                  ariaLabel={`Secret of ${label}`}
                  value={row.secret}
                  placeholder="my-secret"
                  name={`env.${i}.secret`}
                  error={errorOf(errors, `env.${i}.secret`)}
                  onChange={secret => update(i, { secret })}
                />
                <TextField
                  label="Key"
                  ariaLabel={`Key in the secret of ${label}`}
                  value={row.key}
                  placeholder="token"
                  name={`env.${i}.key`}
                  error={errorOf(errors, `env.${i}.key`)}
                  onChange={key => update(i, { key })}
                />
              </div>
            )}
            <Button
              kind="link"
              aria-label={`Remove ${label}`}
              onClick={() =>
                onChange({ env: form.env.filter((_, j) => j !== i) })
              }
            >
              Remove
            </Button>
          </fieldset>
        );
      })}
      <Button onClick={() => onChange({ env: [...form.env, emptyEnvRow()] })}>
        Add variable
      </Button>
    </div>
  );
}
