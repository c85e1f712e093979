import * as React from 'react';

import { fieldLabel, generalErrors } from '../../form/fields';
import type { IJobForm } from '../../form/model';
import type { IFieldError } from '../../form/errors';
import type { Kale } from '../../types';
import { Button } from '../shared/fields';
import { formatPlace } from '../shared/format';

/**
 * Compile errors and warnings; each located one links to its cell.
 */
export function DiagnosticList(props: {
  diagnostics: Kale.IDiagnostic[];
  onSelect: (diagnostic: Kale.IDiagnostic) => void;
}): JSX.Element | null {
  if (props.diagnostics.length === 0) {
    return null;
  }
  return (
    <ul className="kale-ext-Diagnostics" aria-label="Problems">
      {props.diagnostics.map((d, i) => {
        const place = formatPlace(d.cell, d.line);
        const message =
          d.field && !d.message.startsWith(d.field)
            ? `${d.field}: ${d.message}`
            : d.message;
        return (
          <li
            key={i}
            className={`kale-ext-Diagnostic kale-ext-mod-${d.severity}`}
            data-cell={d.cell ?? undefined}
          >
            <span className="kale-ext-Diagnostic-severity">
              {d.severity === 'error' ? 'Error' : 'Warning'}
            </span>
            {place && (
              <Button
                kind="link"
                className="kale-ext-Diagnostic-link"
                aria-label={`Go to ${place}`}
                onClick={() => props.onSelect(d)}
              >
                {place}
              </Button>
            )}
            <span className="kale-ext-Diagnostic-message">{message}</span>
          </li>
        );
      })}
    </ul>
  );
}

/**
 * The fields with a problem, each by its label, in the order the panel
 * shows them; a click takes the cursor to the field.
 */
export function FieldErrorList(props: {
  errors: IFieldError[];
  form: IJobForm;
}): JSX.Element | null {
  if (props.errors.length === 0) {
    return null;
  }
  return (
    <ul className="kale-ext-Diagnostics" aria-label="Fields to fix">
      {props.errors.map(e => {
        const label = fieldLabel(e.field, props.form);
        return (
          <li
            key={e.field}
            className="kale-ext-Diagnostic kale-ext-mod-error"
            data-field={e.field}
          >
            <span className="kale-ext-Diagnostic-severity">Error</span>
            <Button
              kind="link"
              className="kale-ext-Diagnostic-link"
              aria-label={`Go to ${label}`}
              onClick={event => focusField(event.currentTarget, e.field)}
            >
              {label}
            </Button>
            <span className="kale-ext-Diagnostic-message">{e.message}</span>
          </li>
        );
      })}
    </ul>
  );
}

/**
 * The checks: every field with a problem (by its label), the notebook's
 * errors (linked to their cells), its warnings.
 */
export function Validation(props: {
  compile: Kale.ICompileResult | null;
  compiling: boolean;
  error: string;
  form: IJobForm;
  /** The fields' problems (the panel's checks and the compile's). */
  fieldErrors: IFieldError[];
  onSelect: (diagnostic: Kale.IDiagnostic) => void;
}): JSX.Element {
  const { compile, compiling, error, form, fieldErrors } = props;
  const general = generalErrors(compile, form);
  const count = fieldErrors.length + general.length;
  let status: string;
  let kind = 'info';
  if (error) {
    status = `The notebook could not be checked: ${error}`;
    kind = 'error';
  } else if (count > 0) {
    status = `${count} ${count === 1 ? 'error' : 'errors'}`;
    kind = 'error';
  } else if (!compile) {
    status = 'Checking the notebook…';
  } else {
    status = compile.function_name
      ? `Compiles: ${compile.function_name}()`
      : 'Compiles';
    kind = 'ok';
  }
  return (
    <div className="kale-ext-Validation" aria-busy={compiling}>
      <div
        className={`kale-ext-Validation-status kale-ext-mod-${kind}`}
        role="status"
      >
        {status}
        {compiling && compile && (
          <span className="kale-ext-Muted"> · checking…</span>
        )}
      </div>
      <FieldErrorList errors={fieldErrors} form={form} />
      {compile && (
        <DiagnosticList
          diagnostics={[...general, ...compile.warnings]}
          onSelect={props.onSelect}
        />
      )}
    </div>
  );
}

/**
 * Take the cursor to a field of the panel `from` is in, opening the
 * sections around it.
 */
export function focusField(from: Element, field: string): void {
  const root = from.closest('.kale-ext-PanelView') ?? document;
  const input = root.querySelector<HTMLElement>(
    `[name="${field.replace(/["\\]/g, '\\$&')}"]`
  );
  if (!input) {
    return;
  }
  for (
    let details = input.closest('details');
    details;
    details = details.parentElement?.closest('details') ?? null
  ) {
    details.open = true;
  }
  input.focus();
  input.scrollIntoView?.({ block: 'center' });
}
