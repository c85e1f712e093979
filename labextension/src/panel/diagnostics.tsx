import * as React from 'react';

import type { Kale } from '../types';
import { Button } from './fields';
import { formatPlace } from './format';

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
 * The check's state, its errors and warnings.
 */
export function Validation(props: {
  compile: Kale.ICompileResult | null;
  compiling: boolean;
  error: string;
  onSelect: (diagnostic: Kale.IDiagnostic) => void;
}): JSX.Element {
  const { compile, compiling, error } = props;
  let status: string;
  let kind = 'info';
  if (error) {
    status = `The notebook could not be checked: ${error}`;
    kind = 'error';
  } else if (!compile) {
    status = 'Checking the notebook…';
  } else if (!compile.ok) {
    const n = compile.errors.length;
    status = `${n} ${n === 1 ? 'error' : 'errors'}`;
    kind = 'error';
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
      {compile && (
        <DiagnosticList
          diagnostics={[...compile.errors, ...compile.warnings]}
          onSelect={props.onSelect}
        />
      )}
    </div>
  );
}
