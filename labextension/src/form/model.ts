import type { JSONObject, JSONValue } from '@lumino/coreutils';

import type { Kale } from '../types';
import { formatParameter, isQuantity, parseCount } from './values';
import { parseOutputs, sentVolumes } from './volumes';

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
 * Whether the notebook's packages without a version are pinned to the
 * versions installed where the panel's server runs (`pin_packages`): '' the
 * backend's default (on for local runs, off on a cluster), or set.
 */
export type PinMode = '' | 'on' | 'off';

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
  /** The packages to install; null: those compile detected. */
  packages: string[] | null;
  /** The `pin_packages` option ('' the backend's default). */
  pinPackages: PinMode;
  /** Parameter overrides, as typed (the server types them by the notebook's
   * `parameters` cell). */
  parameters: { [name: string]: string };
  /** The parameter values the notebook's metadata held, sent as they were
   * while their text is unchanged (so reading and writing loses nothing). */
  storedParameters: { [name: string]: JSONValue };
  /** Volumes in their short forms (`pvc:data:/data:ro`), one a row, as typed. */
  volumes: string[];
  /** The size of a memory-backed /dev/shm ('' none). */
  shmSize: string;
  /** The outputs volume on Kubernetes, `pvc:NAME[:/mount]` ('' none). */
  outputs: string;
  /** Which train() call of a Kubeflow SDK notebook is the job, 1-based ('' the last). */
  trainCall: string;
  /** The Kueue LocalQueue the job waits in for quota ('' none). */
  queue: string;
  /** How many times the whole job starts again when a node fails ('' not chosen: 0). */
  maxRestarts: string;
  /** Options the panel does not edit (image, dataset_uri, ...), kept as found. */
  extraOptions: JSONObject;
  /** Config the panel does not edit (labels, tolerations, ...), kept as found. */
  extraConfig: JSONObject;
}

/**
 * What the server told us that validating needs: the notebook's parameters
 * with their defaults, the runtime (its name limit), the jobs listed.
 */
export interface IFormContext {
  parameters?: { [name: string]: JSONValue };
  runtime?: Kale.IRuntime;
  /** The job runs on the Local backend (volumes need a local folder). */
  local?: boolean;
  /** The jobs that exist (their names): a job name must be another. */
  jobs?: string[];
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
    pinPackages: '',
    parameters: {},
    storedParameters: {},
    volumes: [],
    shmSize: '',
    outputs: '',
    trainCall: '',
    queue: '',
    maxRestarts: '',
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
 * A MIG profile as the panel accepts it, e.g. "mig-1g.5gb".
 */
export const MIG_PROFILE = /^mig-\d+g\.\d+gb$/;

/**
 * The JobOptions the form stands for (config included), ready to send.
 * Values that do not parse are left out: validation reports them.
 * Parameters go as typed: the server types them.
 */
export function toOptions(form: IJobForm): Kale.IJobOptions {
  const options = Private.copy(form.extraOptions) as Kale.IJobOptions;
  delete options.config;
  const name = form.name.trim();
  if (name) {
    options.name = name;
  }
  if (form.runtime) {
    options.runtime = form.runtime;
  }
  const nodes = parseCount(form.nodes, 'nodes');
  if (nodes.ok && nodes.value !== undefined) {
    options.nodes = nodes.value;
  }
  const procs = parseCount(form.procsPerNode, 'procs_per_node');
  if (procs.ok && procs.value !== undefined) {
    options.procs_per_node = procs.value;
  }
  const call = parseCount(form.trainCall, 'train_call');
  if (call.ok && call.value !== undefined) {
    options.train_call = call.value;
  }
  if (form.queue) {
    options.queue = form.queue;
  }
  const restarts = parseCount(form.maxRestarts, 'max_restarts');
  if (restarts.ok && restarts.value !== undefined) {
    options.max_restarts = restarts.value;
  }
  if (form.gpuMode === 'count') {
    const gpus = parseCount(form.gpuCount, 'gpu');
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
    if (text.trim() === '') {
      continue; // an empty field: the notebook's default
    }
    const stored = form.storedParameters[key];
    parameters[key] =
      stored !== undefined && formatParameter(stored) === text ? stored : text;
  }
  if (Object.keys(parameters).length > 0) {
    options.parameters = parameters;
  }
  if (form.packages !== null) {
    options.packages = form.packages.map(p => p.trim()).filter(p => p);
  }
  if (form.pinPackages !== '') {
    options.pin_packages = form.pinPackages === 'on';
  }
  const volumes = sentVolumes(form.volumes).map(v => v.text);
  if (volumes.length > 0) {
    options.volumes = volumes;
  }
  const shm = form.shmSize.trim();
  if (isQuantity(shm)) {
    options.shm_size = shm;
  }
  const outputs = parseOutputs(form.outputs);
  if (outputs.ok && outputs.value) {
    options.outputs = form.outputs.trim();
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
    if (isQuantity(t)) {
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
  form: IJobForm
): Kale.JobRequest {
  return { ...source, options: toOptions(form) };
}

namespace Private {
  export function copy<T>(value: T): T {
    return value === undefined ? value : JSON.parse(JSON.stringify(value));
  }
}
