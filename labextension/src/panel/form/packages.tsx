import * as React from 'react';

import type { PinMode } from '../../form/model';
import { Button, errorOf, SelectField } from '../shared/fields';
import type { IFormProps } from './job-form';

/**
 * The `pin_packages` choices, the first naming the backend's default: on for
 * a local run (it keeps the job's versions this machine's), off on a cluster
 * (the runtime image's own packages are used).
 */
export function pinChoices(
  local: boolean
): { value: PinMode; label: string }[] {
  return [
    {
      value: '',
      label: local
        ? 'Default: on (a local run pins them to the versions here)'
        : "Default: off (a cluster run uses the image's own)"
    },
    { value: 'on', label: 'On: pin to the versions installed here' },
    { value: 'off', label: 'Off: install by name, only where missing' }
  ];
}

/**
 * The packages the job installs: those compile detected, editable.
 */
export function PackagesEditor(
  props: IFormProps & {
    detected: string[];
    /** The notebook has not compiled: its imports are not known. */
    unknown?: boolean;
    /** The job runs on the Local backend (pinning's default is on). */
    local?: boolean;
  }
): JSX.Element {
  const { form, errors, onChange, detected } = props;
  const list = form.packages ?? detected;
  const set = (packages: string[]) => onChange({ packages });
  const tooMany = errorOf(errors, 'packages');
  return (
    <div className="kale-ext-List">
      <p className="kale-ext-Muted">
        {form.packages !== null
          ? 'Edited: these replace the detected packages of the same name.'
          : props.unknown
            ? 'Cannot detect the packages: the notebook does not compile (see Checks).'
            : 'Detected from the imports and %pip lines, by name; a local run pins them to the versions installed here (the preview says when each is installed).'}
      </p>
      {tooMany && (
        <div className="kale-ext-Field-error" role="alert">
          {tooMany}
        </div>
      )}
      {list.map((spec, i) => {
        const error = errorOf(errors, `packages.${i}`);
        return (
          <div key={i} className="kale-ext-ListRow">
            <input
              className="kale-ext-Input"
              type="text"
              spellCheck={false}
              name={`packages.${i}`}
              aria-label={`Package ${i + 1}`}
              aria-invalid={error ? true : undefined}
              title={error || undefined}
              value={spec}
              onChange={event =>
                set(list.map((p, j) => (j === i ? event.target.value : p)))
              }
            />
            <Button
              kind="link"
              aria-label={`Remove package ${spec || i + 1}`}
              onClick={() => set(list.filter((_, j) => j !== i))}
            >
              Remove
            </Button>
            {error && (
              <div className="kale-ext-Field-error" role="alert">
                {error}
              </div>
            )}
          </div>
        );
      })}
      <SelectField
        label="Pin package versions"
        name="pinPackages"
        value={form.pinPackages}
        options={pinChoices(!!props.local)}
        onChange={value => onChange({ pinPackages: value as PinMode })}
      />
      <div className="kale-ext-Row">
        <Button onClick={() => set([...list, ''])}>Add package</Button>
        {form.packages !== null && (
          <Button onClick={() => onChange({ packages: null })}>
            Use detected
          </Button>
        )}
      </div>
    </div>
  );
}
