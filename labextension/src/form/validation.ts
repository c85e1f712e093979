import { matches, optionRule, RESERVED_ENV, valueRule } from '../contract';
import type { Kale } from '../types';
import type { IFieldError } from './errors';
import { IFormContext, IJobForm, MIG_PROFILE } from './model';
import { parseCount, quantityValue } from './values';
import { storageErrors } from './volumes';

const REQUIREMENT =
  /^[A-Za-z0-9][A-Za-z0-9._-]*(\[[^\]]*\])?\s*([<>=!~;@ ].*)?$/;

/**
 * The longest TrainJob name whose pod names stay within a DNS label:
 * `<job>-<replicated job>-0-<index>-<5 chars>` (`kale_ext/job/spec.py`:
 * name_limit).
 */
export function nameLimit(runtime?: Kale.IRuntime, nodes = 1): number {
  const jobs = ['node', ...(runtime?.initializers ?? [])];
  const longest = Math.max(...jobs.map(j => j.length));
  const label = valueRule('dns_label').maxLength;
  return label - longest - String(Math.max(nodes - 1, 0)).length - 10;
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

  const nodes = parseCount(form.nodes, 'nodes');
  const name = form.name.trim();
  if (name) {
    const limit = nameLimit(
      context.runtime,
      nodes.ok ? (nodes.value ?? context.runtime?.num_nodes ?? 1) : 1
    );
    const suggestion = suggestName(name, limit);
    const instead =
      suggestion && suggestion !== name ? `: try ${suggestion}` : '';
    if (!matches('job_name', name)) {
      add(
        'name',
        `"${name}" is not a job name (lowercase letters, digits and '-', starting with a letter and ending with a letter or digit)${instead}`
      );
    } else if (name.length > limit) {
      add(
        'name',
        `${name.length} characters; this runtime allows at most ${limit}${instead}`
      );
    } else if (context.jobs?.includes(name)) {
      add(
        'name',
        `a job named ${name} exists already: choose another name, or leave it empty for a new one`
      );
    }
  }
  if (!nodes.ok) {
    add('nodes', nodes.error);
  }
  const procs = parseCount(form.procsPerNode, 'procs_per_node');
  if (!procs.ok) {
    add('procsPerNode', procs.error);
  }
  const call = parseCount(form.trainCall, 'train_call');
  if (!call.ok) {
    add('trainCall', call.error);
  }
  const restarts = parseCount(form.maxRestarts, 'max_restarts');
  if (!restarts.ok) {
    add('maxRestarts', restarts.error);
  }
  if (form.gpuMode === 'count') {
    const gpus = parseCount(form.gpuCount, 'gpu');
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
    if (!matches('env_name', name)) {
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
      if (!matches('dns_subdomain', row.secret.trim())) {
        add(
          `env.${i}.secret`,
          'the name of a Secret (lowercase, digits, - and .)'
        );
      }
      if (!matches('config_key', row.key.trim())) {
        add(
          `env.${i}.key`,
          'a key of the Secret (letters, digits, -, _ and .)'
        );
      }
    }
  });

  errors.push(...storageErrors(form, context.local ?? false));

  const packages = form.packages ?? [];
  const most = optionRule('packages').maximum;
  if (most !== undefined && packages.filter(p => p.trim()).length > most) {
    add('packages', `at most ${most} packages`);
  }
  packages.forEach((spec, i) => {
    const t = spec.trim();
    if (t && !REQUIREMENT.test(t)) {
      add(`packages.${i}`, `"${t}" is not a requirement (e.g. numpy==2.1.0)`);
    }
  });

  return errors;
}

/**
 * A valid job name close to `text` and within `limit` characters
 * (`MyTrainingJob` → `mytrainingjob`), or '' when none is near.
 */
export function suggestName(text: string, limit: number): string {
  let name = text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^[^a-z]+/, '');
  name = name.slice(0, Math.max(0, limit)).replace(/-+$/, '');
  return matches('job_name', name) ? name : '';
}
