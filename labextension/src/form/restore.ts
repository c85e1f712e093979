import type { JSONObject, JSONValue } from '@lumino/coreutils';

import { emptyForm, GpuMode, IEnvRow, IJobForm } from './model';
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
    'trainCall'
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
  const out: IRestoredField[] = [];
  const add = (
    label: string,
    section: string,
    text: (v: IPanelValues) => string
  ) => {
    const [a, b] = [text(restored), text(notebook)];
    if (a !== b) {
      out.push({
        label,
        section,
        restored: Private.shown(a),
        notebook: Private.shown(b)
      });
    }
  };
  for (const [label, section, text] of FIELDS) {
    add(label, section, text);
  }
  const names = (pick: (v: IPanelValues) => { [k: string]: string }) => [
    ...new Set([...Object.keys(pick(restored)), ...Object.keys(pick(notebook))])
  ];
  const params = (v: IPanelValues) => v.form.parameters;
  for (const name of names(params)) {
    add(`parameter ${name}`, 'parameters', v => params(v)[name] ?? '');
  }
  const swept = (v: IPanelValues) => v.sweep.params;
  for (const name of names(swept)) {
    add(`sweep of ${name}`, 'parameters', v => swept(v)[name] ?? '');
  }
  for (const [label, text] of SWEEP_FIELDS) {
    if (
      Object.keys(swept(restored)).length + Object.keys(swept(notebook)).length
    ) {
      add(label, 'parameters', text);
    }
  }
  return out;
}

type Field = [string, string, (v: IPanelValues) => string];

/** The form's fields as the note names them, with their section. */
const FIELDS: Field[] = [
  ['job name', 'job', v => v.form.name.trim()],
  ['runtime', 'job', v => v.form.runtime],
  ['train() call', 'job', v => v.form.trainCall],
  ['nodes', 'job', v => v.form.nodes.trim()],
  ['processes per node', 'job', v => v.form.procsPerNode.trim()],
  ['other options', 'job', v => Private.json(v.form.extraOptions)],
  [
    'GPUs',
    'resources',
    v =>
      v.form.gpuMode === 'count'
        ? v.form.gpuCount
        : v.form.gpuMode === 'mig'
          ? v.form.migProfile
          : ''
  ],
  ['CPU request', 'resources', v => v.form.cpuRequest.trim()],
  ['CPU limit', 'resources', v => v.form.cpuLimit.trim()],
  ['memory request', 'resources', v => v.form.memoryRequest.trim()],
  ['memory limit', 'resources', v => v.form.memoryLimit.trim()],
  ['other config', 'resources', v => Private.json(v.form.extraConfig)],
  [
    'environment variables',
    'env',
    v =>
      v.form.env
        .filter(r => r.name.trim())
        .map(r =>
          r.source === 'secret'
            ? `${r.name} from ${r.secret}/${r.key}`
            : `${r.name}=${r.value}`
        )
        .join(', ')
  ],
  ['volumes', 'storage', v => Private.listed(v.form.volumes)],
  ['shared memory', 'storage', v => v.form.shmSize.trim()],
  ['outputs volume', 'storage', v => v.form.outputs.trim()],
  [
    'packages',
    'packages',
    v =>
      v.form.packages === null
        ? '(as detected)'
        : Private.listed(v.form.packages)
  ]
];

const SWEEP_FIELDS: [string, (v: IPanelValues) => string][] = [
  ['sweep search', v => v.sweep.search],
  ['sweep trials', v => v.sweep.trials],
  ['trials at a time', v => v.sweep.parallel],
  ['sweep metric', v => v.sweep.metric],
  ['sweep goal', v => v.sweep.goal],
  ['early stopping', v => (v.sweep.earlyStop ? 'on' : 'off')]
];

namespace Private {
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
