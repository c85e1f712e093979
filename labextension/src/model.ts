import type { JSONObject, JSONValue } from '@lumino/coreutils';

import type { Kale } from './types';

/**
 * One environment variable row of the form: a value, or a Secret's key.
 */
export interface IEnvRow {
  name: string;
  source: 'value' | 'secret';
  value: string;
  secret: string;
  key: string;
}

/**
 * GPUs per node: none, a count of whole GPUs, or one MIG profile.
 */
export type GpuMode = 'none' | 'count' | 'mig';

/**
 * The panel's form state: one plain object, kept as the user typed it
 * (strings, so a half-typed value stays visible), that serializes to the
 * request body and to the notebook's `metadata.kale_ext`.
 *
 * An empty string means "not chosen here": the notebook's distributed cell
 * or the runtime decides.
 */
export interface IJobForm {
  runtime: string;
  name: string;
  nodes: string;
  procsPerNode: string;
  gpuMode: GpuMode;
  gpuCount: string;
  migProfile: string;
  cpuRequest: string;
  cpuLimit: string;
  memoryRequest: string;
  memoryLimit: string;
  env: IEnvRow[];
  /** The packages to install; null: the pins compile detected. */
  packages: string[] | null;
  /** Parameter overrides, as typed (JSON text, or plain text for strings). */
  parameters: { [name: string]: string };
  /** Options the panel does not edit (image, dataset_uri, ...), kept as found. */
  extraOptions: JSONObject;
  /** Config the panel does not edit (labels, tolerations, ...), kept as found. */
  extraConfig: JSONObject;
}

/**
 * What the server told us that serializing needs: the notebook's parameters
 * with their defaults (their types decide how a typed value is read).
 */
export interface IFormContext {
  parameters?: { [name: string]: JSONValue };
  runtime?: Kale.IRuntime;
}

/**
 * A form with nothing chosen.
 */
export function emptyForm(): IJobForm {
  return {
    runtime: '',
    name: '',
    nodes: '',
    procsPerNode: '',
    gpuMode: 'none',
    gpuCount: '',
    migProfile: '',
    cpuRequest: '',
    cpuLimit: '',
    memoryRequest: '',
    memoryLimit: '',
    env: [],
    packages: null,
    parameters: {},
    extraOptions: {},
    extraConfig: {}
  };
}

/**
 * A new, empty environment variable row.
 */
export function emptyEnvRow(): IEnvRow {
  return { name: '', source: 'value', value: '', secret: '', key: '' };
}

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

/**
 * A Kubernetes quantity ("500m", "2", "4Gi", "1e3").
 */
export const QUANTITY =
  /^(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE][+-]?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$/;

/**
 * A MIG profile as the panel accepts it, e.g. "mig-1g.5gb".
 */
export const MIG_PROFILE = /^mig-\d+g\.\d+gb$/;

/**
 * The JobOptions the form stands for (config included), ready to send.
 * Values that do not parse are left out: validation reports them.
 */
export function toOptions(
  form: IJobForm,
  context: IFormContext = {}
): Kale.IJobOptions {
  const options = Private.copy(form.extraOptions) as Kale.IJobOptions;
  delete options.config;
  const name = form.name.trim();
  if (name) {
    options.name = name;
  }
  if (form.runtime) {
    options.runtime = form.runtime;
  }
  const nodes = parseCount(form.nodes, 1);
  if (nodes.ok && nodes.value !== undefined) {
    options.nodes = nodes.value;
  }
  const procs = parseCount(form.procsPerNode, 1);
  if (procs.ok && procs.value !== undefined) {
    options.procs_per_node = procs.value;
  }
  if (form.gpuMode === 'count') {
    const gpus = parseCount(form.gpuCount, 0);
    if (gpus.ok && gpus.value !== undefined) {
      options.gpu = gpus.value;
    }
  } else if (form.gpuMode === 'mig') {
    const profile = form.migProfile.trim().toLowerCase();
    if (MIG_PROFILE.test(profile)) {
      options.gpu = profile;
    }
  }
  const parameters: { [name: string]: JSONValue } = {};
  for (const [key, text] of Object.entries(form.parameters)) {
    const parsed = parseParameter(text, context.parameters?.[key]);
    if (parsed.ok) {
      parameters[key] = parsed.value;
    }
  }
  if (Object.keys(parameters).length > 0) {
    options.parameters = parameters;
  }
  if (form.packages !== null) {
    options.packages = form.packages.map(p => p.trim()).filter(p => p);
  }
  const config = toConfig(form);
  if (Object.keys(config).length > 0) {
    options.config = config;
  }
  return options;
}

/**
 * The DistributedConfig part of the form: env, per-node requests and limits,
 * and the config the panel keeps without editing.
 */
export function toConfig(form: IJobForm): Kale.IDistributedConfig {
  const config = Private.copy(form.extraConfig) as Kale.IDistributedConfig;
  const requests = { ...(config.requests ?? {}) };
  const limits = { ...(config.limits ?? {}) };
  const set = (target: Record<string, string>, key: string, text: string) => {
    const t = text.trim();
    if (QUANTITY.test(t)) {
      target[key] = t;
    }
  };
  set(requests, 'cpu', form.cpuRequest);
  set(requests, 'memory', form.memoryRequest);
  set(limits, 'cpu', form.cpuLimit);
  set(limits, 'memory', form.memoryLimit);
  for (const [key, value] of [
    ['requests', requests],
    ['limits', limits]
  ] as const) {
    if (Object.keys(value).length > 0) {
      config[key] = value;
    } else {
      delete config[key];
    }
  }
  const env: Kale.IEnvVar[] = [];
  for (const row of form.env) {
    const name = row.name.trim();
    if (!name) {
      continue;
    }
    if (row.source === 'secret') {
      env.push({
        name,
        valueFrom: {
          secretKeyRef: { name: row.secret.trim(), key: row.key.trim() }
        }
      });
    } else {
      env.push({ name, value: row.value });
    }
  }
  const kept = Array.isArray(config.env) ? config.env : [];
  if (env.length + kept.length > 0) {
    config.env = [...env, ...kept];
  } else {
    delete config.env;
  }
  return config;
}

/**
 * The body of `POST compile` / `POST jobs`.
 */
export function jobRequest(
  source: Kale.NotebookSource,
  form: IJobForm,
  context: IFormContext = {}
): Kale.JobRequest {
  return { ...source, options: toOptions(form, context) };
}

/**
 * What the panel writes to `metadata.kale_ext`: the options without their
 * config, and the config.
 */
export function toMetadata(
  form: IJobForm,
  context: IFormContext = {}
): Kale.INotebookMetadata {
  const options = toOptions(form, context);
  const config = options.config ?? {};
  delete options.config;
  return { options, config };
}

/**
 * The form a notebook's `metadata.kale_ext` stands for. Anything the panel
 * does not edit is kept, so writing the form back loses nothing.
 */
export function fromMetadata(value: unknown): IJobForm {
  const form = emptyForm();
  const meta = Private.object(value);
  const options = Private.object(Private.copy(meta.options));
  const config = Private.object(Private.copy(meta.config));
  const handled = [
    'name',
    'runtime',
    'nodes',
    'procs_per_node',
    'gpu',
    'cpu',
    'memory',
    'env',
    'packages',
    'parameters',
    'config'
  ];
  const text = (v: unknown) =>
    typeof v === 'string' || typeof v === 'number' ? String(v) : '';

  form.name = text(options.name);
  form.runtime = text(options.runtime);
  form.nodes = text(options.nodes);
  form.procsPerNode = text(options.procs_per_node);
  const gpu = options.gpu;
  if (
    typeof gpu === 'number' ||
    (typeof gpu === 'string' && /^\d+$/.test(gpu))
  ) {
    form.gpuMode = 'count';
    form.gpuCount = String(gpu);
  } else if (typeof gpu === 'string' && gpu) {
    form.gpuMode = 'mig';
    form.migProfile = gpu;
  }

  // Per-node CPU and memory: the config's requests and limits, under the
  // `cpu`/`memory` options (which set both, and win on the server too).
  const requests = Private.object(config.requests);
  const limits = Private.object(config.limits);
  form.cpuRequest = text(options.cpu ?? requests.cpu);
  form.cpuLimit = text(options.cpu ?? limits.cpu);
  form.memoryRequest = text(options.memory ?? requests.memory);
  form.memoryLimit = text(options.memory ?? limits.memory);
  for (const [key, resources] of [
    ['requests', requests],
    ['limits', limits]
  ] as const) {
    delete resources.cpu;
    delete resources.memory;
    if (Object.keys(resources).length > 0) {
      config[key] = resources;
    } else {
      delete config[key];
    }
  }

  // Environment: plain values and Secret keys are rows; anything else
  // (a ConfigMap key, a field reference) is kept as it is. The `env` option
  // wins over the config's, as on the server.
  const kept: JSONValue[] = [];
  for (const item of Array.isArray(config.env) ? config.env : []) {
    const row = Private.envRow(item);
    if (row) {
      form.env = form.env.filter(r => r.name !== row.name).concat(row);
    } else {
      kept.push(item);
    }
  }
  for (const [name, v] of Object.entries(Private.object(options.env))) {
    const row = { ...emptyEnvRow(), name, value: text(v) };
    const i = form.env.findIndex(r => r.name === name);
    if (i >= 0) {
      form.env[i] = row;
    } else {
      form.env.push(row);
    }
  }
  if (kept.length > 0) {
    config.env = kept;
  } else {
    delete config.env;
  }

  if (Array.isArray(options.packages)) {
    form.packages = options.packages.filter(
      (p): p is string => typeof p === 'string'
    );
  }
  for (const [key, v] of Object.entries(Private.object(options.parameters))) {
    form.parameters[key] = formatParameter(v as JSONValue);
  }

  for (const [key, v] of Object.entries(options)) {
    if (!handled.includes(key) && v !== undefined) {
      form.extraOptions[key] = v as JSONValue;
    }
  }
  form.extraConfig = config as JSONObject;
  return form;
}

/**
 * Whether two forms mean the same request.
 */
export function sameForm(a: IJobForm, b: IJobForm): boolean {
  return JSON.stringify(toMetadata(a)) === JSON.stringify(toMetadata(b));
}

namespace Private {
  export function copy<T>(value: T): T {
    return value === undefined ? value : JSON.parse(JSON.stringify(value));
  }

  export function object(value: unknown): { [key: string]: JSONValue } {
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as { [key: string]: JSONValue })
      : {};
  }

  export function envRow(item: unknown): IEnvRow | null {
    const env = object(item);
    if (typeof env.name !== 'string') {
      return null;
    }
    const keys = Object.keys(env).sort().join(',');
    if (keys === 'name,value' && typeof env.value === 'string') {
      return { ...emptyEnvRow(), name: env.name, value: env.value };
    }
    const ref = object(object(env.valueFrom).secretKeyRef);
    if (
      keys === 'name,valueFrom' &&
      Object.keys(object(env.valueFrom)).join() === 'secretKeyRef' &&
      typeof ref.name === 'string' &&
      typeof ref.key === 'string' &&
      Object.keys(ref).length === 2
    ) {
      return {
        ...emptyEnvRow(),
        name: env.name,
        source: 'secret',
        secret: ref.name,
        key: ref.key
      };
    }
    return null;
  }

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
