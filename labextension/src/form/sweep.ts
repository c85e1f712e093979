import type { JSONValue } from '@lumino/coreutils';

import { SWEEP } from '../contract';
import type { Kale } from '../types';
import type { Parsed } from './values';

/**
 * A sweep as the panel's form holds it, as typed, and read by the server's
 * rules (`kale_ext/runs/space.py`, `sweep.py`; the ranges, searches and
 * bounds come from the contract): a swept parameter is a list
 * (`1e-4, 1e-3`, `choice(sgd, adam)`) or a range (`loguniform(1e-5, 1e-1)`,
 * `uniform(0, 0.5)`, `int(1, 4)`). The text goes to the server as typed;
 * the server types the values by the notebook's `parameters` cell.
 */

/**
 * The sweep settings of the form (strings as typed).
 */
export interface ISweepForm {
  /** Swept parameters: name → spec as typed. */
  params: { [name: string]: string };
  search: string;
  /** Trials of a random or tpe search ('' none). */
  trials: string;
  parallel: string;
  /** The metric the search goes by ('' none). */
  metric: string;
  /** '' (by the metric's name), min or max. */
  goal: string;
  earlyStop: boolean;
}

export function emptySweep(): ISweepForm {
  return {
    params: {},
    search: 'grid',
    trials: '',
    parallel: '1',
    metric: '',
    goal: '',
    earlyStop: false
  };
}

/**
 * A swept parameter, read: its values, or a range.
 */
export type SweepDimension =
  | { kind: 'values'; values: string[] }
  | { kind: string; low: number; high: number };

/**
 * `text` cut at its commas, except those inside brackets or quotes.
 */
export function splitItems(text: string): string[] {
  const items: string[] = [];
  let depth = 0;
  let quote = '';
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quote) {
      quote = ch === quote ? '' : quote;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
    } else if ('([{'.includes(ch)) {
      depth++;
    } else if (')]}'.includes(ch)) {
      depth--;
    } else if (ch === ',' && depth === 0) {
      items.push(text.slice(start, i));
      start = i + 1;
    }
  }
  items.push(text.slice(start));
  return items.map(s => s.trim());
}

const CALL = /^\s*(\w+)\s*\(([\s\S]*)\)\s*$/;
const TRUE_FALSE = ['true', 'yes', 'on', '1', 'false', 'no', 'off', '0'];

function isNumber(value: JSONValue | undefined): value is number {
  return typeof value === 'number';
}

/**
 * Read one swept parameter's spec, for a parameter whose default is
 * `defaultValue` (its type decides what a value may be).
 */
export function parseDimension(
  text: string,
  defaultValue: JSONValue | undefined
): Parsed<SweepDimension> {
  const t = text.trim();
  if (!t) {
    return {
      ok: false,
      error: 'give values (1e-4, 1e-3) or a range (loguniform(1e-5, 1e-1))'
    };
  }
  const call = CALL.exec(t);
  if (call && SWEEP.ranges.includes(call[1])) {
    return parseRange(call[1], splitItems(call[2]), defaultValue);
  }
  if (call && call[1] !== 'choice' && isNumber(defaultValue)) {
    return {
      ok: false,
      error: `unknown range ${call[1]}(...) (use ${SWEEP.ranges.join(', ')} or choice)`
    };
  }
  const items =
    call && call[1] === 'choice' ? splitItems(call[2]) : splitItems(t);
  if (items.some(v => v === '')) {
    return { ok: false, error: `"${t}" has an empty value` };
  }
  for (const item of items) {
    const problem = valueProblem(item, defaultValue);
    if (problem) {
      return { ok: false, error: problem };
    }
  }
  return { ok: true, value: { kind: 'values', values: items } };
}

function valueProblem(
  item: string,
  defaultValue: JSONValue | undefined
): string {
  if (isNumber(defaultValue)) {
    const n = Number(item.replace(/_/g, ''));
    return Number.isFinite(n) ? '' : `"${item}" is not a number`;
  }
  if (typeof defaultValue === 'boolean') {
    return TRUE_FALSE.includes(item.toLowerCase())
      ? ''
      : `"${item}" is not true or false`;
  }
  return '';
}

function parseRange(
  kind: string,
  args: string[],
  defaultValue: JSONValue | undefined
): Parsed<SweepDimension> {
  if (args.length !== 2 || args.some(a => a === '')) {
    return { ok: false, error: `${kind}(LOW, HIGH) takes two numbers` };
  }
  const [low, high] = args.map(Number);
  for (const [i, v] of [low, high].entries()) {
    if (!Number.isFinite(v)) {
      return { ok: false, error: `"${args[i]}" is not a finite number` };
    }
  }
  // (JSON has no int/float: a float parameter's default of 1.0 reads as 1,
  // so only what is certain is checked here; the server checks the rest.)
  if (kind === 'int') {
    if (!isNumber(defaultValue) || !Number.isInteger(defaultValue)) {
      return {
        ok: false,
        error: `int(LOW, HIGH) needs an int parameter (default ${JSON.stringify(defaultValue ?? null)})`
      };
    }
    if (!Number.isInteger(low) || !Number.isInteger(high)) {
      return { ok: false, error: 'int(LOW, HIGH) takes whole numbers' };
    }
  } else if (!isNumber(defaultValue)) {
    return {
      ok: false,
      error: `${kind}(LOW, HIGH) needs a float parameter (default ${JSON.stringify(defaultValue ?? null)})`
    };
  }
  if (kind === 'loguniform' && low <= 0) {
    return {
      ok: false,
      error: `loguniform needs both ends above 0, got ${args[0]}`
    };
  }
  if (low >= high) {
    return {
      ok: false,
      error: `the low end ${args[0]} must be below the high end ${args[1]}`
    };
  }
  return { ok: true, value: { kind, low, high } };
}

/**
 * Whether any parameter sweeps.
 */
export function isSweeping(sweep: ISweepForm): boolean {
  return Object.keys(sweep.params).length > 0;
}

function count(text: string, most: number): string {
  const t = text.trim();
  if (!/^\d+$/.test(t) || Number(t) < 1 || Number(t) > most) {
    return `must be a whole number from 1 to ${most}`;
  }
  return '';
}

/**
 * The sweep's problems, by field (`sweep.lr`, `sweep.trials`, ...): each
 * swept parameter read by its default's type, the settings by the server's
 * rules, and the `name` the sweep would run under (typed, or the one the
 * preview shows). Nothing when no parameter sweeps.
 */
export function validateSweep(
  sweep: ISweepForm,
  defaults: { [name: string]: JSONValue } | undefined,
  name?: string | null
): { field: string; message: string }[] {
  if (!isSweeping(sweep)) {
    return [];
  }
  const errors: { field: string; message: string }[] = [];
  if (name && name.length > SWEEP.max_name) {
    // the name shown is the sweep's: refused here, never changed behind it
    errors.push({
      field: 'name',
      message: `a sweep's name is at most ${SWEEP.max_name} characters (its trials are ${name}-0, -1, ...): type a shorter one`
    });
  }
  let combos = 1;
  for (const [name, text] of Object.entries(sweep.params)) {
    const parsed = parseDimension(text, defaults?.[name]);
    if (!parsed.ok) {
      errors.push({ field: `sweep.${name}`, message: parsed.error });
    } else if (parsed.value.kind !== 'values' && sweep.search === 'grid') {
      errors.push({
        field: `sweep.${name}`,
        message: 'a range needs a random or tpe search, not a grid'
      });
    } else if ('values' in parsed.value) {
      combos *= parsed.value.values.length;
    }
  }
  if (sweep.search === 'grid' && combos > SWEEP.max_trials) {
    errors.push({
      field: 'sweep.search',
      message: `the grid has ${combos} trials, more than ${SWEEP.max_trials}`
    });
  }
  const parallel = count(sweep.parallel, SWEEP.max_parallel);
  if (parallel) {
    errors.push({ field: 'sweep.parallel', message: parallel });
  }
  if (sweep.search !== 'grid') {
    const trials = count(sweep.trials, SWEEP.max_trials);
    if (trials) {
      errors.push({
        field: 'sweep.trials',
        message: `a ${sweep.search} search needs a number of trials: ${trials}`
      });
    }
  }
  if ((sweep.search !== 'grid' || sweep.earlyStop) && !sweep.metric.trim()) {
    const why =
      sweep.search === 'grid' ? 'early stopping' : `a ${sweep.search} search`;
    errors.push({
      field: 'sweep.metric',
      message: `${why} needs the metric to go by`
    });
  }
  return errors;
}

/**
 * The `sweep` of `POST sweeps` the form stands for.
 */
export function sweepSettings(sweep: ISweepForm): Kale.ISweepSettings {
  const params: { [name: string]: string } = {};
  for (const [name, text] of Object.entries(sweep.params)) {
    params[name] = text.trim();
  }
  const out: Kale.ISweepSettings = {
    params,
    search: sweep.search,
    parallel: Number(sweep.parallel.trim())
  };
  if (sweep.search !== 'grid') {
    out.trials = Number(sweep.trials.trim());
  }
  if (sweep.metric.trim()) {
    out.metric = sweep.metric.trim();
  }
  if (sweep.goal) {
    out.goal = sweep.goal;
  }
  if (sweep.earlyStop) {
    out.early_stop = true;
  }
  return out;
}

/**
 * The body of `POST sweeps` for a job request and the form's sweep: the
 * options as they are, every parameter set in the form among them (the
 * server applies those not swept to every trial) and the name the preview
 * showed (the sweep's name; its trials are `<name>-<number>`).
 */
export function sweepRequest(
  body: Kale.JobRequest,
  sweep: ISweepForm
): Kale.SweepRequest {
  return { ...body, sweep: sweepSettings(sweep) };
}

/**
 * The sweep as the notebook's `metadata.kale_ext.sweep` keeps it (the
 * shape of `POST sweeps`' `sweep`, each spec as typed; counts only once
 * they are whole numbers), or null when nothing differs from a new form.
 */
export function sweepToMetadata(sweep: ISweepForm): Kale.ISweepSettings | null {
  const empty = emptySweep();
  const out: Kale.ISweepSettings = { params: { ...sweep.params } };
  if (sweep.search !== empty.search) {
    out.search = sweep.search;
  }
  for (const key of ['trials', 'parallel'] as const) {
    const t = sweep[key].trim();
    if (t !== empty[key] && /^\d+$/.test(t)) {
      out[key] = Number(t);
    }
  }
  if (sweep.metric.trim()) {
    out.metric = sweep.metric.trim();
  }
  if (sweep.goal) {
    out.goal = sweep.goal;
  }
  if (sweep.earlyStop) {
    out.early_stop = true;
  }
  const changed =
    Object.keys(out.params).length > 0 || Object.keys(out).length > 1;
  return changed ? out : null;
}

/**
 * The sweep form a notebook's `metadata.kale_ext.sweep` stands for; what
 * does not read as a setting is left at its default.
 */
export function sweepFromMetadata(value: unknown): ISweepForm {
  const sweep = emptySweep();
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return sweep;
  }
  const meta = value as { [key: string]: unknown };
  const params = meta.params;
  if (typeof params === 'object' && params !== null && !Array.isArray(params)) {
    for (const [name, spec] of Object.entries(params)) {
      if (typeof spec === 'string') {
        sweep.params[name] = spec;
      } else if (Array.isArray(spec)) {
        // a list of values (as the CLI's --param keeps them)
        sweep.params[name] = spec
          .map(v => (typeof v === 'string' ? v : JSON.stringify(v)))
          .join(', ');
      }
    }
  }
  const text = (v: unknown): string | null =>
    typeof v === 'string' || typeof v === 'number' ? String(v) : null;
  if (typeof meta.search === 'string' && SWEEP.searches.includes(meta.search)) {
    sweep.search = meta.search;
  }
  sweep.trials = text(meta.trials) ?? sweep.trials;
  sweep.parallel = text(meta.parallel) ?? sweep.parallel;
  sweep.metric = typeof meta.metric === 'string' ? meta.metric : '';
  sweep.goal = meta.goal === 'min' || meta.goal === 'max' ? meta.goal : '';
  sweep.earlyStop = meta.early_stop === true;
  return sweep;
}

/**
 * Whether two sweep forms keep the same settings.
 */
export function sameSweep(a: ISweepForm, b: ISweepForm): boolean {
  return (
    JSON.stringify(sweepToMetadata(a)) === JSON.stringify(sweepToMetadata(b))
  );
}
