import type { JSONObject, JSONValue } from '@lumino/coreutils';

import type { Kale } from '../types';
import { emptyEnvRow, emptyForm, IEnvRow, IJobForm, toOptions } from './model';
import { ISweepForm, sweepToMetadata } from './sweep';
import { formatParameter } from './values';

/**
 * The form kept in the notebook's `metadata.kale_ext`, and read back from
 * it with nothing the panel does not edit lost.
 */

/**
 * What the panel writes to `metadata.kale_ext`: the options without their
 * config, the config, and the sweep settings when there are any
 * (`sweepFromMetadata` reads them back).
 */
export function toMetadata(
  form: IJobForm,
  sweep?: ISweepForm
): Kale.INotebookMetadata {
  const options = toOptions(form);
  const config = options.config ?? {};
  delete options.config;
  const settings = sweep ? sweepToMetadata(sweep) : null;
  return settings ? { options, config, sweep: settings } : { options, config };
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
    'pin_packages',
    'parameters',
    'volumes',
    'shm_size',
    'outputs',
    'train_call',
    'queue',
    'max_restarts',
    'config'
  ];
  const text = (v: unknown) =>
    typeof v === 'string' || typeof v === 'number' ? String(v) : '';

  form.name = text(options.name);
  form.runtime = text(options.runtime);
  form.nodes = text(options.nodes);
  form.procsPerNode = text(options.procs_per_node);
  form.trainCall = text(options.train_call);
  form.queue = text(options.queue);
  form.maxRestarts = text(options.max_restarts);
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
  if (Array.isArray(options.volumes)) {
    form.volumes = options.volumes.filter(
      (v): v is string => typeof v === 'string'
    );
  }
  if (typeof options.pin_packages === 'boolean') {
    form.pinPackages = options.pin_packages ? 'on' : 'off';
  }
  form.shmSize = text(options.shm_size);
  form.outputs = text(options.outputs);
  for (const [key, v] of Object.entries(Private.object(options.parameters))) {
    form.parameters[key] = formatParameter(v as JSONValue);
    form.storedParameters[key] = v as JSONValue;
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
}
