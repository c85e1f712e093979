import type { Kale } from '../types';
import { IFormContext, IJobForm, MIG_PROFILE, QUANTITY } from './model';
import { parseCount, parseParameter } from './values';

/**
 * A problem with one field of the form, found as the user types (the
 * server's compile checks the rest).
 */
export interface IFieldError {
  /** The form field: `nodes`, `cpuLimit`, `env.2.name`, `parameters.lr`, ... */
  field: string;
  message: string;
}

/**
 * Variables the Trainer sets on every node (the webhook rejects them).
 */
export const RESERVED_ENV = [
  'PET_NNODES',
  'PET_NPROC_PER_NODE',
  'PET_NODE_RANK',
  'PET_MASTER_ADDR',
  'PET_MASTER_PORT'
];

const JOB_NAME = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const DNS_SUBDOMAIN =
  /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const SECRET_KEY = /^[-._a-zA-Z0-9]+$/;
const REQUIREMENT =
  /^[A-Za-z0-9][A-Za-z0-9._-]*(\[[^\]]*\])?\s*([<>=!~;@ ].*)?$/;

const SUFFIXES: { [suffix: string]: number } = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18
};

/**
 * The numeric value of a Kubernetes quantity, or null if it is not one.
 */
export function quantityValue(text: string): number | null {
  const t = text.trim();
  if (!QUANTITY.test(t)) {
    return null;
  }
  const m = /^([0-9.]+)(.*)$/.exec(t);
  if (!m) {
    return null;
  }
  const [, number, suffix] = m;
  if (suffix in SUFFIXES) {
    return Number(number) * SUFFIXES[suffix];
  }
  return Number(t); // an exponent: 1e3
}

/**
 * The longest TrainJob name whose pod names stay within 63 characters:
 * `<job>-<replicated job>-0-<index>-<5 chars>` (kale_ext.jobspec.name_limit).
 */
export function nameLimit(runtime?: Kale.IRuntime, nodes = 1): number {
  const jobs = ['node', ...(runtime?.initializers ?? [])];
  const longest = Math.max(...jobs.map(j => j.length));
  return 63 - longest - String(Math.max(nodes - 1, 0)).length - 10;
}

/**
 * Every problem of the form, in the order the fields appear.
 */
export function validateForm(
  form: IJobForm,
  context: IFormContext = {}
): IFieldError[] {
  const errors: IFieldError[] = [];
  const add = (field: string, message: string) =>
    errors.push({ field, message });

  const nodes = parseCount(form.nodes, 1);
  const name = form.name.trim();
  if (name) {
    const limit = nameLimit(
      context.runtime,
      nodes.ok ? (nodes.value ?? context.runtime?.num_nodes ?? 1) : 1
    );
    if (!JOB_NAME.test(name)) {
      add(
        'name',
        "lowercase letters, digits and '-', starting with a letter and ending with a letter or digit"
      );
    } else if (name.length > limit) {
      add(
        'name',
        `${name.length} characters; this runtime allows at most ${limit}`
      );
    }
  }
  if (!nodes.ok) {
    add('nodes', nodes.error);
  }
  const procs = parseCount(form.procsPerNode, 1);
  if (!procs.ok) {
    add('procsPerNode', procs.error);
  }
  if (form.gpuMode === 'count') {
    const gpus = parseCount(form.gpuCount, 0);
    if (!gpus.ok) {
      add('gpuCount', gpus.error);
    } else if (gpus.value === undefined) {
      add('gpuCount', 'enter a number of GPUs per node');
    }
  } else if (form.gpuMode === 'mig') {
    if (!MIG_PROFILE.test(form.migProfile.trim().toLowerCase())) {
      add('migProfile', 'a MIG profile such as mig-1g.5gb');
    }
  }

  for (const [resource, request, limit] of [
    ['cpu', 'cpuRequest', 'cpuLimit'],
    ['memory', 'memoryRequest', 'memoryLimit']
  ] as const) {
    const values: (number | null)[] = [];
    for (const field of [request, limit]) {
      const text = form[field].trim();
      const value = text ? quantityValue(text) : null;
      if (text && value === null) {
        const example = resource === 'cpu' ? '500m or 2' : '512Mi or 4Gi';
        add(field, `"${text}" is not a quantity (e.g. ${example})`);
      }
      values.push(value);
    }
    if (values[0] !== null && values[1] !== null && values[0] > values[1]) {
      add(
        request,
        `${form[request].trim()} is more than its limit ${form[limit].trim()}`
      );
    }
  }

  const seen = new Set<string>();
  form.env.forEach((row, i) => {
    const name = row.name.trim();
    if (!ENV_NAME.test(name)) {
      add(
        `env.${i}.name`,
        name
          ? `"${name}" is not a variable name (letters, digits and _, not starting with a digit)`
          : 'enter a name'
      );
    } else if (RESERVED_ENV.includes(name)) {
      add(`env.${i}.name`, `${name} is set by the Trainer on each node`);
    } else if (seen.has(name)) {
      add(`env.${i}.name`, `${name} is set twice`);
    }
    seen.add(name);
    if (row.source === 'secret') {
      if (!DNS_SUBDOMAIN.test(row.secret.trim())) {
        add(
          `env.${i}.secret`,
          'the name of a Secret (lowercase, digits, - and .)'
        );
      }
      if (!SECRET_KEY.test(row.key.trim())) {
        add(
          `env.${i}.key`,
          'a key of the Secret (letters, digits, -, _ and .)'
        );
      }
    }
  });

  (form.packages ?? []).forEach((spec, i) => {
    const t = spec.trim();
    if (t && !REQUIREMENT.test(t)) {
      add(`packages.${i}`, `"${t}" is not a requirement (e.g. numpy==2.1.0)`);
    }
  });

  for (const [key, text] of Object.entries(form.parameters)) {
    const defaults = context.parameters;
    if (defaults && !(key in defaults)) {
      add(`parameters.${key}`, 'the notebook has no such parameter');
      continue;
    }
    const parsed = parseParameter(text, defaults?.[key]);
    if (!parsed.ok) {
      add(`parameters.${key}`, parsed.error);
    }
  }
  return errors;
}
