import type { Kale } from '../types';
import type { IJobForm } from './model';
import type { IFieldError } from './errors';
import { parseVolume, sentVolumes } from './volumes';

/**
 * The form's fields as the user knows them: their labels, their order on
 * the panel, and the server's names for them (a compile's config error
 * names the option, `requests.cpu`, `parameters.epochs`, `env[0].name`).
 */

/**
 * The fields in the order the panel shows them (a row's fields by prefix).
 */
const ORDER = [
  'trainCall',
  'runtime',
  'name',
  'nodes',
  'procsPerNode',
  'queue',
  'maxRestarts',
  'gpuMode',
  'gpuCount',
  'migProfile',
  'cpuRequest',
  'cpuLimit',
  'memoryRequest',
  'memoryLimit',
  'parameters',
  'sweep',
  'env',
  'volumes',
  'shmSize',
  'outputs',
  'packages',
  'pinPackages'
];

const LABELS: Record<string, string> = {
  trainCall: 'train() call',
  runtime: 'Runtime',
  name: 'Job name',
  nodes: 'Nodes',
  procsPerNode: 'Processes per node',
  queue: 'Queue',
  maxRestarts: 'Restarts',
  gpuMode: 'GPUs per node',
  gpuCount: 'GPU count',
  migProfile: 'MIG profile',
  cpuRequest: 'CPU request',
  cpuLimit: 'CPU limit',
  memoryRequest: 'Memory request',
  memoryLimit: 'Memory limit',
  parameters: 'Parameters',
  env: 'Environment variables',
  volumes: 'Volumes',
  shmSize: 'Shared memory',
  outputs: 'Outputs volume',
  packages: 'Packages',
  pinPackages: 'Pin package versions'
};

/**
 * Where a field stands on the panel, for sorting (unknown ones last).
 */
export function fieldRank(field: string): number {
  const head = field.split('.')[0];
  const i = ORDER.indexOf(head);
  return i < 0 ? ORDER.length : i;
}

/**
 * A field's label as the panel shows it: `Memory limit`, `Parameter
 * epochs`, `Name of variable 2`, `Package 3`.
 */
export function fieldLabel(field: string, form: IJobForm): string {
  const [head, key, part] = field.split('.');
  if (head === 'parameters' && key !== undefined) {
    return `Parameter ${field.slice('parameters.'.length)}`;
  }
  if (head === 'sweep' && key !== undefined) {
    const setting: Record<string, string> = {
      search: 'Sweep search',
      trials: 'Sweep trials',
      parallel: 'Sweep parallel',
      metric: 'Sweep metric'
    };
    return setting[key] ?? `Sweep of ${field.slice('sweep.'.length)}`;
  }
  if (head === 'env' && key !== undefined) {
    const row = form.env[Number(key)];
    const name = row?.name.trim() || `variable ${Number(key) + 1}`;
    return part === 'secret'
      ? `Secret of ${name}`
      : part === 'key'
        ? `Key of ${name}`
        : `Name of ${name}`;
  }
  if (head === 'packages' && key !== undefined) {
    return `Package ${Number(key) + 1}`;
  }
  if (head === 'volumes' && key !== undefined) {
    return `Volume ${Number(key) + 1}`;
  }
  return LABELS[field] ?? field;
}

/**
 * The form field a server's field name stands for, or null when the form
 * has none (the error stays a general one). A mount's error is the row of
 * the volume its message names (the server's list holds the notebook's
 * mounts too).
 */
export function formField(
  server: string,
  form: IJobForm,
  message = ''
): string | null {
  const field = server.replace(/^config\./, '').replace(/\[(\d+)\]/g, '.$1');
  const resource = /^(requests|limits)\.(cpu|memory)$/.exec(field);
  if (resource) {
    const kind = resource[2] === 'cpu' ? 'cpu' : 'memory';
    return `${kind}${resource[1] === 'requests' ? 'Request' : 'Limit'}`;
  }
  const simple: Record<string, string> = {
    name: 'name',
    runtime: 'runtime',
    nodes: 'nodes',
    procs_per_node: 'procsPerNode',
    train_call: 'trainCall',
    queue: 'queue',
    max_restarts: 'maxRestarts',
    cpu: 'cpuRequest',
    memory: 'memoryRequest',
    shm_size: 'shmSize',
    outputs: 'outputs',
    pin_packages: 'pinPackages'
  };
  if (field in simple) {
    return simple[field];
  }
  if (field === 'gpu') {
    return form.gpuMode === 'mig'
      ? 'migProfile'
      : form.gpuMode === 'count'
        ? 'gpuCount'
        : 'gpuMode';
  }
  if (/^parameters\../.test(field)) {
    return field;
  }
  const env = /^env\.(\d+)(\.name)?$/.exec(field);
  if (env && Number(env[1]) < form.env.length) {
    return `env.${env[1]}.name`;
  }
  const volume = /^volumes\.(\d+)$/.exec(field);
  if (volume) {
    const sent = sentVolumes(form.volumes)[Number(volume[1])];
    return sent ? `volumes.${sent.index}` : null;
  }
  if (/^volume_mounts\.\d+/.test(field)) {
    const bare = message.replace(/^[^:]*: /, '');
    const i = form.volumes.findIndex(text => {
      const parsed = parseVolume(text);
      return parsed.ok && bare.startsWith(`${parsed.value.mount} `);
    });
    return i < 0 ? null : `volumes.${i}`;
  }
  const pkg = /^packages\.(\d+)$/.exec(field);
  if (pkg && form.packages !== null && Number(pkg[1]) < form.packages.length) {
    return field;
  }
  return null;
}

/**
 * The message of a server error without its leading field name
 * (`requests.cpu: 4 is more than …` → `4 is more than …`).
 */
export function bareMessage(diagnostic: Kale.IDiagnostic): string {
  const field = diagnostic.field;
  return field && diagnostic.message.startsWith(`${field}: `)
    ? diagnostic.message.slice(field.length + 2)
    : diagnostic.message;
}

/**
 * The problems of the form's fields: those found as the user types, and the
 * compile's config errors about a field (a field the panel already marks
 * keeps its own message), in the order the fields appear on the panel.
 */
export function formErrors(
  typed: IFieldError[],
  compile: Kale.ICompileResult | null,
  form: IJobForm
): IFieldError[] {
  const errors = [...typed];
  for (const d of compile?.errors ?? []) {
    const field = d.field ? formField(d.field, form, d.message) : null;
    if (field && !errors.some(e => e.field === field)) {
      errors.push({ field, message: bareMessage(d) });
    }
  }
  return errors
    .map((e, i) => ({ e, i }))
    .sort((a, b) => fieldRank(a.e.field) - fieldRank(b.e.field) || a.i - b.i)
    .map(({ e }) => e);
}

/**
 * The compile's errors that are not about a form field (cells, the
 * notebook, options the panel does not edit).
 */
export function generalErrors(
  compile: Kale.ICompileResult | null,
  form: IJobForm
): Kale.IDiagnostic[] {
  return (compile?.errors ?? []).filter(
    d => !d.field || formField(d.field, form, d.message) === null
  );
}
