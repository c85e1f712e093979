import type { JSONObject, JSONValue } from '@lumino/coreutils';

import { emptyForm, GpuMode, IEnvRow, IJobForm, PinMode } from './model';
import { emptySweep, ISweepForm } from './sweep';

/**
 * The panel's form as the server keeps it for a notebook (`PUT
 * panel-state`, the schema `PanelState` of openapi.yaml), read back with
 * every value checked, and what a restored form changes from the
 * notebook's own values (shown to the user, never applied silently).
 */

/** The form and the sweep settings: everything the panel submits. */
export interface IPanelValues {
  form: IJobForm;
  sweep: ISweepForm;
}

/** The version of the stored state this panel reads. */
export const PANEL_STATE_VERSION = 1;

/**
 * The state to keep: the values as typed.
 */
export function toStored(values: IPanelValues): {
  version: number;
  form: IJobForm;
  sweep: ISweepForm;
} {
  return {
    version: PANEL_STATE_VERSION,
    form: values.form,
    sweep: values.sweep
  };
}

/**
 * The values a kept state holds; null when it is none, of another version
 * or not an object. A field of the wrong type reads as not chosen.
 */
export function fromStored(value: unknown): IPanelValues | null {
  const stored = Private.object(value);
  if (stored.version !== PANEL_STATE_VERSION) {
    return null;
  }
  const raw = Private.object(stored.form);
  const form = emptyForm();
  const texts = [
    'runtime',
    'name',
    'nodes',
    'procsPerNode',
    'gpuCount',
    'migProfile',
    'cpuRequest',
    'cpuLimit',
    'memoryRequest',
    'memoryLimit',
    'shmSize',
    'outputs',
    'trainCall',
    'queue',
    'maxRestarts'
  ] as const;
  for (const key of texts) {
    const v = raw[key];
    if (typeof v === 'string') {
      form[key] = v;
    }
  }
  if (['none', 'count', 'mig'].includes(raw.gpuMode as string)) {
    form.gpuMode = raw.gpuMode as GpuMode;
  }
  if (['', 'on', 'off'].includes(raw.pinPackages as string)) {
    form.pinPackages = raw.pinPackages as PinMode;
  }
  form.env = Private.list(raw.env)
    .map(item => Private.object(item))
    .filter(
      row =>
        ['name', 'value', 'secret', 'key'].every(
          f => typeof row[f] === 'string'
        ) &&
        (row.source === 'value' || row.source === 'secret')
    ) as unknown as IEnvRow[];
  form.packages = Array.isArray(raw.packages)
    ? Private.strings(raw.packages)
    : null;
  form.volumes = Private.strings(raw.volumes);
  form.parameters = Private.textMap(raw.parameters);
  form.storedParameters = Private.object(raw.storedParameters);
  form.extraOptions = Private.object(raw.extraOptions);
  form.extraConfig = Private.object(raw.extraConfig);

  const rawSweep = Private.object(stored.sweep);
  const sweep = emptySweep();
  sweep.params = Private.textMap(rawSweep.params);
  for (const key of [
    'search',
    'trials',
    'parallel',
    'metric',
    'goal'
  ] as const) {
    const v = rawSweep[key];
    if (typeof v === 'string') {
      sweep[key] = v;
    }
  }
  if (typeof rawSweep.earlyStop === 'boolean') {
    sweep.earlyStop = rawSweep.earlyStop;
  }
  return { form, sweep };
}

/**
 * A value a restored form holds that the notebook on disk does not.
 */
export interface IRestoredField {
  /** What it is, as the note says it ("job name", "parameter epochs"). */
  label: string;
  /** The panel section it is in (`data-section`). */
  section: string;
  /** The value restored, as shown. */
  restored: string;
  /** The notebook's value, as shown. */
  notebook: string;
}

/**
 * What `restored` changes from the notebook's own values, in the form's
 * order; empty when they mean the same.
 */
export function restoredFields(
  notebook: IPanelValues,
  restored: IPanelValues
): IRestoredField[] {
  return Private.fields(notebook, restored)
    .map(field => ({ field, a: field.text(restored), b: field.text(notebook) }))
    .filter(({ a, b }) => a !== b)
    .map(({ field, a, b }) => ({
      label: field.label,
      section: field.section,
      restored: Private.shown(a),
      notebook: Private.shown(b)
    }));
}

/**
 * The note's fields once the form holds `now`: those of `fields` still
 * holding their restored value (a field the user edited since is theirs,
 * not a restored one).
 */
export function stillRestored(
  fields: IRestoredField[],
  notebook: IPanelValues,
  now: IPanelValues
): IRestoredField[] {
  return restoredFields(notebook, now).filter(f =>
    fields.some(o => o.label === f.label && o.restored === f.restored)
  );
}

/**
 * `current` with the fields named `labels` (as `restoredFields` names
 * them) set back to the notebook's values; every other field as it is.
 */
export function withNotebookValues(
  current: IPanelValues,
  notebook: IPanelValues,
  labels: string[]
): IPanelValues {
  const out: IPanelValues = JSON.parse(JSON.stringify(current));
  const from: IPanelValues = JSON.parse(JSON.stringify(notebook));
  for (const field of Private.fields(notebook, current)) {
    if (labels.includes(field.label)) {
      field.copy(from, out);
    }
  }
  return out;
}

/** A field as the note names it, how it reads, and how it is copied. */
interface IField {
  label: string;
  section: string;
  text: (v: IPanelValues) => string;
  /** Set `to`'s value of this field to `from`'s. */
  copy: (from: IPanelValues, to: IPanelValues) => void;
}

/** A field of the form that is one or more of its keys. */
function formField(
  label: string,
  section: string,
  keys: (keyof IJobForm)[],
  text: (v: IPanelValues) => string
): IField {
  return {
    label,
    section,
    text,
    copy: (from, to) => {
      for (const key of keys) {
        (to.form as unknown as Record<string, unknown>)[key] = from.form[key];
      }
    }
  };
}

/** The form's fields as the note names them, with their section. */
const FIELDS: IField[] = [
  formField('job name', 'job', ['name'], v => v.form.name.trim()),
  formField('runtime', 'job', ['runtime'], v => v.form.runtime),
  formField('train() call', 'job', ['trainCall'], v => v.form.trainCall),
  formField('nodes', 'job', ['nodes'], v => v.form.nodes.trim()),
  formField('processes per node', 'job', ['procsPerNode'], v =>
    v.form.procsPerNode.trim()
  ),
  formField('queue', 'job', ['queue'], v => v.form.queue),
  formField('restarts', 'job', ['maxRestarts'], v => v.form.maxRestarts.trim()),
  formField('other options', 'job', ['extraOptions'], v =>
    Private.json(v.form.extraOptions)
  ),
  formField('GPUs', 'resources', ['gpuMode', 'gpuCount', 'migProfile'], v =>
    v.form.gpuMode === 'count'
      ? v.form.gpuCount
      : v.form.gpuMode === 'mig'
        ? v.form.migProfile
        : ''
  ),
  formField('CPU request', 'resources', ['cpuRequest'], v =>
    v.form.cpuRequest.trim()
  ),
  formField('CPU limit', 'resources', ['cpuLimit'], v =>
    v.form.cpuLimit.trim()
  ),
  formField('memory request', 'resources', ['memoryRequest'], v =>
    v.form.memoryRequest.trim()
  ),
  formField('memory limit', 'resources', ['memoryLimit'], v =>
    v.form.memoryLimit.trim()
  ),
  formField('other config', 'resources', ['extraConfig'], v =>
    Private.json(v.form.extraConfig)
  ),
  formField('environment variables', 'env', ['env'], v =>
    v.form.env
      .filter(r => r.name.trim())
      .map(r =>
        r.source === 'secret'
          ? `${r.name} from ${r.secret}/${r.key}`
          : `${r.name}=${r.value}`
      )
      .join(', ')
  ),
  formField('volumes', 'storage', ['volumes'], v =>
    Private.listed(v.form.volumes)
  ),
  formField('shared memory', 'storage', ['shmSize'], v =>
    v.form.shmSize.trim()
  ),
  formField('outputs volume', 'storage', ['outputs'], v =>
    v.form.outputs.trim()
  ),
  formField('packages', 'packages', ['packages'], v =>
    v.form.packages === null ? '(as detected)' : Private.listed(v.form.packages)
  ),
  formField('pin package versions', 'packages', ['pinPackages'], v =>
    v.form.pinPackages === '' ? "(the backend's default)" : v.form.pinPackages
  )
];

/** The sweep's settings (shown when either side sweeps a parameter). */
const SWEEP_FIELDS: [string, keyof ISweepForm, (v: IPanelValues) => string][] =
  [
    ['sweep search', 'search', v => v.sweep.search],
    ['sweep trials', 'trials', v => v.sweep.trials],
    ['trials at a time', 'parallel', v => v.sweep.parallel],
    ['sweep metric', 'metric', v => v.sweep.metric],
    ['sweep goal', 'goal', v => v.sweep.goal],
    ['early stopping', 'earlyStop', v => (v.sweep.earlyStop ? 'on' : 'off')]
  ];

namespace Private {
  /**
   * Every field either side holds, in the form's order: the form's, each
   * parameter, each swept parameter, the sweep's settings.
   */
  export function fields(a: IPanelValues, b: IPanelValues): IField[] {
    const names = (pick: (v: IPanelValues) => { [k: string]: string }) => [
      ...new Set([...Object.keys(pick(a)), ...Object.keys(pick(b))])
    ];
    const params = (v: IPanelValues) => v.form.parameters;
    const swept = (v: IPanelValues) => v.sweep.params;
    const out = [...FIELDS];
    for (const name of names(params)) {
      out.push({
        label: `parameter ${name}`,
        section: 'parameters',
        text: v => params(v)[name] ?? '',
        copy: (from, to) => {
          copyKey(from.form.parameters, to.form.parameters, name);
          copyKey(from.form.storedParameters, to.form.storedParameters, name);
        }
      });
    }
    for (const name of names(swept)) {
      out.push({
        label: `sweep of ${name}`,
        section: 'parameters',
        text: v => swept(v)[name] ?? '',
        copy: (from, to) => copyKey(from.sweep.params, to.sweep.params, name)
      });
    }
    if (Object.keys(swept(a)).length + Object.keys(swept(b)).length) {
      for (const [label, key, text] of SWEEP_FIELDS) {
        out.push({
          label,
          section: 'parameters',
          text,
          copy: (from, to) => {
            (to.sweep as unknown as Record<string, unknown>)[key] =
              from.sweep[key];
          }
        });
      }
    }
    return out;
  }

  /** `to[name]` as `from[name]` (absent when it is). */
  export function copyKey<T>(
    from: { [k: string]: T },
    to: { [k: string]: T },
    name: string
  ): void {
    if (name in from) {
      to[name] = from[name];
    } else {
      delete to[name];
    }
  }

  export function object(value: unknown): JSONObject {
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as JSONObject)
      : {};
  }

  export function list(value: unknown): JSONValue[] {
    return Array.isArray(value) ? value : [];
  }

  export function strings(value: unknown): string[] {
    return list(value).filter((v): v is string => typeof v === 'string');
  }

  export function textMap(value: unknown): { [name: string]: string } {
    const out: { [name: string]: string } = {};
    for (const [k, v] of Object.entries(object(value))) {
      if (typeof v === 'string') {
        out[k] = v;
      }
    }
    return out;
  }

  export function json(value: JSONObject): string {
    return Object.keys(value).length ? JSON.stringify(value) : '';
  }

  /** The entries a list sends (an empty row sends nothing). */
  export function listed(items: string[]): string {
    return items
      .map(s => s.trim())
      .filter(s => s)
      .join(', ');
  }

  export function shown(text: string): string {
    return text === '' ? 'none' : text;
  }
}
