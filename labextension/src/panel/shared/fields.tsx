import type { LabIcon } from '@jupyterlab/ui-components';
import * as React from 'react';

import type { IFieldError } from '../../form/errors';

/**
 * The message of a field's first error, if any.
 */
export function errorOf(errors: IFieldError[], field: string): string {
  return errors.find(e => e.field === field)?.message ?? '';
}

/**
 * Follow a `<details>`' own toggle: a `<details>` inside it (a list that
 * folds) toggles too, and React hands that event to every `<details>`
 * around it.
 */
export function ownToggle(
  setOpen: (open: boolean) => void
): React.ReactEventHandler<HTMLDetailsElement> {
  return event => {
    if (event.target === event.currentTarget) {
      setOpen(event.currentTarget.open);
    }
  };
}

/**
 * A collapsible section (a native `<details>`, so keyboard and screen
 * readers know it).
 */
export function Section(props: {
  title: string;
  id: string;
  open?: boolean;
  badge?: React.ReactNode;
  children: React.ReactNode;
}): JSX.Element {
  const [open, setOpen] = React.useState(props.open ?? true);
  React.useEffect(() => {
    if (props.open) {
      setOpen(true); // asked to open (a restored value inside): opened
    }
  }, [props.open]);
  return (
    <details
      className="kale-ext-Section"
      data-section={props.id}
      open={open}
      onToggle={ownToggle(setOpen)}
    >
      <summary className="kale-ext-Section-title">
        <span>{props.title}</span>
        {props.badge}
      </summary>
      <div className="kale-ext-Section-body">{props.children}</div>
    </details>
  );
}

export interface ITextFieldProps {
  label: string;
  value: string;
  onChange: (value: string) => void;
  /** A hidden, complete label for screen readers, when `label` is short. */
  ariaLabel?: string;
  error?: string;
  placeholder?: string;
  hint?: string;
  numeric?: boolean;
  name?: string;
}

/**
 * A labelled text input with its error message.
 */
export function TextField(props: ITextFieldProps): JSX.Element {
  const id = React.useId();
  const errorId = `${id}-error`;
  const hintId = `${id}-hint`;
  const described = [props.error ? errorId : '', props.hint ? hintId : '']
    .filter(Boolean)
    .join(' ');
  return (
    <div className="kale-ext-Field">
      <label htmlFor={id} className="kale-ext-Field-label">
        {props.label}
      </label>
      <input
        id={id}
        name={props.name}
        className="kale-ext-Input"
        type="text"
        inputMode={props.numeric ? 'numeric' : undefined}
        spellCheck={false}
        autoComplete="off"
        value={props.value}
        placeholder={props.placeholder}
        aria-label={props.ariaLabel}
        aria-invalid={props.error ? true : undefined}
        aria-describedby={described || undefined}
        onChange={event => props.onChange(event.target.value)}
      />
      {props.hint && (
        <div id={hintId} className="kale-ext-Field-hint">
          {props.hint}
        </div>
      )}
      {props.error && (
        <div id={errorId} className="kale-ext-Field-error" role="alert">
          {props.error}
        </div>
      )}
    </div>
  );
}

/**
 * A labelled select.
 */
export function SelectField(props: {
  label: string;
  value: string;
  options: { value: string; label: string }[];
  onChange: (value: string) => void;
  ariaLabel?: string;
  name?: string;
}): JSX.Element {
  const id = React.useId();
  return (
    <div className="kale-ext-Field">
      <label htmlFor={id} className="kale-ext-Field-label">
        {props.label}
      </label>
      <select
        id={id}
        name={props.name}
        className="kale-ext-Select"
        value={props.value}
        aria-label={props.ariaLabel}
        onChange={event => props.onChange(event.target.value)}
      >
        {props.options.map(o => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </div>
  );
}

/**
 * A button that shows only its icon: `label` is its accessible name, and
 * its tooltip unless `title` says more (start it with what the label says:
 * the tooltip is all a sighted user reads of it).
 */
export function IconButton(
  props: React.ButtonHTMLAttributes<HTMLButtonElement> & {
    icon: LabIcon;
    label: string;
  }
): JSX.Element {
  const { icon, label, className, title, ...rest } = props;
  return (
    <button
      type="button"
      className={`kale-ext-Button kale-ext-IconButton ${className ?? ''}`.trim()}
      aria-label={label}
      title={title ?? label}
      {...rest}
    >
      <icon.react tag="span" className="kale-ext-IconButton-icon" />
    </button>
  );
}

/**
 * A small text button.
 */
export function Button(
  props: React.ButtonHTMLAttributes<HTMLButtonElement> & {
    kind?: 'accept' | 'warn' | 'plain' | 'link';
  }
): JSX.Element {
  const { kind = 'plain', className, ...rest } = props;
  return (
    <button
      type="button"
      className={`kale-ext-Button kale-ext-Button-${kind} ${className ?? ''}`.trim()}
      {...rest}
    />
  );
}
