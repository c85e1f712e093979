import type { JSONValue } from '@lumino/coreutils';

/**
 * Reading what the user typed into the form's fields: counts and parameter
 * values (typed as the notebook's defaults are).
 */

/**
 * The result of reading a typed value.
 */
export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

/**
 * Read a whole number of at least `minimum` ('' is not chosen: undefined).
 */
export function parseCount(
  text: string,
  minimum: number
): Parsed<number | undefined> {
  const t = text.trim();
  if (t === '') {
    return { ok: true, value: undefined };
  }
  if (!/^\d+$/.test(t)) {
    return { ok: false, error: `must be a whole number, not "${t}"` };
  }
  const value = Number(t);
  if (value < minimum) {
    return { ok: false, error: `must be at least ${minimum}` };
  }
  return { ok: true, value };
}

/**
 * Read a parameter value as typed. A string parameter takes the text as it
 * is (or a quoted JSON string); any other takes JSON (Python's True, False
 * and None too) of the default's type.
 */
export function parseParameter(
  text: string,
  defaultValue?: JSONValue
): Parsed<JSONValue> {
  const t = text.trim();
  if (typeof defaultValue === 'string') {
    if (t.startsWith('"')) {
      try {
        const value = JSON.parse(t) as JSONValue;
        if (typeof value === 'string') {
          return { ok: true, value };
        }
      } catch {
        // not a JSON string: the text itself
      }
    }
    return { ok: true, value: text };
  }
  const python: { [k: string]: JSONValue } = {
    True: true,
    False: false,
    None: null
  };
  let value: JSONValue;
  if (t in python) {
    value = python[t];
  } else {
    try {
      value = JSON.parse(t) as JSONValue;
    } catch {
      if (defaultValue === undefined) {
        return { ok: true, value: text };
      }
      return {
        ok: false,
        error: `"${t}" is not a value: use JSON, e.g. 3, 0.5, true, "text" or [1, 2]`
      };
    }
  }
  const want = Private.kind(defaultValue);
  const got = Private.kind(value);
  if (want !== 'any' && want !== 'null' && got !== want) {
    return { ok: false, error: `must be ${Private.article(want)}` };
  }
  return { ok: true, value };
}

/**
 * How a parameter's value is shown in its input.
 */
export function formatParameter(value: JSONValue | undefined): string {
  if (value === undefined) {
    return '';
  }
  return typeof value === 'string' ? value : JSON.stringify(value);
}

namespace Private {
  export type Kind =
    'string' | 'number' | 'boolean' | 'list' | 'object' | 'null' | 'any';

  export function kind(value: JSONValue | undefined): Kind {
    if (value === undefined) {
      return 'any';
    }
    if (value === null) {
      return 'null';
    }
    if (Array.isArray(value)) {
      return 'list';
    }
    return typeof value as Kind;
  }

  export function article(kind: Kind): string {
    return kind === 'object' ? 'an object' : `a ${kind}`;
  }
}
