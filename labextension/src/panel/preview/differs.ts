import type { JSONValue } from '@lumino/coreutils';

import { isSweeping, parseDimension, type ISweepForm } from '../../form/sweep';
import { formatParameter } from '../../form/values';

/**
 * What the job changes from the notebook, for the preview to say without
 * the YAML: its parameters set in the panel, and a sweep's trials.
 */

/**
 * A parameter the job runs with a value other than the notebook's default.
 */
export interface IOverride {
  name: string;
  /** The notebook's default, as the form shows it ('' when it has none). */
  from: string;
  /** The value sent, as the form shows it. */
  to: string;
}

/**
 * The parameters the job sets to another value than the notebook's
 * (`options.parameters` against the compiled defaults), by name; a value
 * equal to its default, and a swept parameter (the sweep says its values),
 * are not overrides.
 */
export function parameterOverrides(
  defaults: { [name: string]: JSONValue } | undefined,
  given: { [name: string]: JSONValue } | undefined,
  swept: readonly string[] = []
): IOverride[] {
  return Object.entries(given ?? {})
    .filter(([name]) => !swept.includes(name))
    .map(([name, value]) => ({
      name,
      from: formatParameter(defaults?.[name]),
      to: formatParameter(value)
    }))
    .filter(o => o.from !== o.to)
    .sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * A sweep as the preview says it: its search, its trials (null while its
 * fields do not say how many) and each swept parameter's values or range.
 */
export interface ISweepSummary {
  search: string;
  trials: number | null;
  dimensions: { name: string; values: string }[];
}

/**
 * The sweep the form starts, or null when no parameter sweeps. A grid runs
 * every combination of the listed values; a random or TPE search runs the
 * number of trials asked, drawn from the lists and ranges.
 */
export function sweepSummary(
  sweep: ISweepForm,
  defaults: { [name: string]: JSONValue } | undefined
): ISweepSummary | null {
  if (!isSweeping(sweep)) {
    return null;
  }
  let combos: number | null = 1;
  const dimensions = Object.entries(sweep.params)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, text]) => {
      const parsed = parseDimension(text, defaults?.[name]);
      if (
        parsed.ok &&
        parsed.value.kind === 'values' &&
        'values' in parsed.value
      ) {
        combos = combos === null ? null : combos * parsed.value.values.length;
        return { name, values: parsed.value.values.join(', ') };
      }
      combos = null;
      return { name, values: text.trim() };
    });
  const asked = sweep.trials.trim();
  const trials =
    sweep.search === 'grid'
      ? combos
      : /^\d+$/.test(asked) && Number(asked) > 0
        ? Number(asked)
        : null;
  return { search: sweep.search, trials, dimensions };
}
