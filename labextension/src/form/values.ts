import type { JSONValue } from '@lumino/coreutils';

import { matches, optionRule, QUANTITY_SUFFIXES } from '../contract';

/**
 * Reading what the user typed into the form's fields, by the server's rules
 * (the generated contract): counts within their option's bounds, Kubernetes
 * quantities. Parameter values are not read here: they are sent as typed,
 * and the server types them by the notebook's `parameters` cell.
 */

/**
 * The result of reading a typed value.
 */
export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

/**
 * Read a whole number within the bounds of the job option `option`
 * (`nodes`, `procs_per_node`, `gpu`); '' is not chosen: undefined.
 */
export function parseCount(
  text: string,
  option: string
): Parsed<number | undefined> {
  const t = text.trim();
  if (t === '') {
    return { ok: true, value: undefined };
  }
  if (!/^\d+$/.test(t)) {
    return { ok: false, error: `must be a whole number, not "${t}"` };
  }
  const value = Number(t);
  const { minimum, maximum } = optionRule(option);
  if (minimum !== undefined && value < minimum) {
    return { ok: false, error: `must be at least ${minimum}` };
  }
  if (maximum !== undefined && value > maximum) {
    return { ok: false, error: `must be at most ${maximum}, not ${value}` };
  }
  return { ok: true, value };
}

/**
 * Whether `text` is a Kubernetes quantity ("500m", "2", "4Gi", "1e3").
 */
export function isQuantity(text: string): boolean {
  return matches('quantity', text.trim());
}

/**
 * The numeric value of a Kubernetes quantity, or null if it is not one.
 */
export function quantityValue(text: string): number | null {
  const t = text.trim();
  if (!isQuantity(t)) {
    return null;
  }
  const m = /^([0-9.]+)(.*)$/.exec(t);
  if (!m) {
    return null;
  }
  const [, number, suffix] = m;
  if (suffix in QUANTITY_SUFFIXES) {
    return Number(number) * QUANTITY_SUFFIXES[suffix];
  }
  return Number(t); // an exponent: 1e3
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
