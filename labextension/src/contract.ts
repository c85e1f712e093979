/**
 * The server's own rules, as the panel checks and draws by them: the
 * Kubernetes value rules, the job options' bounds and the metrics
 * constants. They come from `contract.json`, which is generated from the
 * Python source (`python -m kale_ext.server.contract`) and kept equal to it
 * by `tests/server/test_contract.py`: the TypeScript side holds no copy.
 */
import data from './contract.json';

/**
 * A Kubernetes value rule: a full-match pattern and a length limit.
 */
export interface IValueRule {
  pattern: RegExp;
  maxLength: number;
}

/**
 * The names of the rules the panel uses (`kale_ext/job/k8s_values.py`).
 */
export type RuleName =
  | 'job_name'
  | 'dns_label'
  | 'dns_subdomain'
  | 'qualified_name'
  | 'label_value'
  | 'env_name'
  | 'config_key'
  | 'quantity';

/**
 * A job option's kind and bounds (`kale_ext/job/options.py`).
 */
export interface IOptionRule {
  kind: string;
  minimum?: number;
  maximum?: number;
  pattern?: string;
}

/**
 * A chart's size and margins, in SVG user units.
 */
export interface IChartSize {
  width: number;
  height: number;
  /** Room for the y labels on the left, x labels below. */
  left: number;
  bottom: number;
  top: number;
  right: number;
}

/**
 * The metrics facts shared with `kale_ext/metrics.py`.
 */
export interface IMetricsContract {
  prefix: string;
  max_points: number;
  series_colors: string[];
  nan_text: string;
  inf_text: string;
  chart_size: IChartSize;
  /** Words that make a metric one whose best value is its lowest. */
  lower_is_better: string[];
  /**
   * The keys of a metrics line that are kale_ext's own, not metrics:
   * progress (`total`, `epoch`, `epochs`) and `checkpoint_step`.
   */
  internal_keys: string[];
}

/**
 * The volume short forms (`kale_ext/job/volumes.py`): their kinds, the
 * forms in words, and the paths kale_ext mounts itself.
 */
export interface IVolumesContract {
  kinds: string[];
  forms: string;
  /** The working directory on a cluster when a mount path is relative. */
  workdir: string;
  shm_mount: string;
  /** Where the outputs volume is mounted when its mount is not given. */
  outputs_mount: string;
}

/**
 * A sweep's rules (`kale_ext/runs/space.py`, `sweep.py`): the ranges a
 * swept parameter may take, the searches, the goals and the bounds.
 */
export interface ISweepContract {
  /** `uniform`, `loguniform`, `int`: ranges (`choice(...)` is a list). */
  ranges: string[];
  searches: string[];
  goals: string[];
  max_trials: number;
  max_parallel: number;
  max_name: number;
}

interface IContract {
  k8s: {
    patterns: Record<string, { pattern: string; max_length: number }>;
    quantity_suffixes: Record<string, number>;
    reserved_env: string[];
  };
  options: Record<string, IOptionRule>;
  metrics: IMetricsContract;
  volumes: IVolumesContract;
  sweep: ISweepContract;
  tags: { skip: string };
  jobs: { statuses: string[] };
}

const contract = data as IContract;

/**
 * A Kubernetes value rule by name.
 */
export function valueRule(name: RuleName): IValueRule {
  const rule = contract.k8s.patterns[name];
  if (!rule) {
    throw new Error(`contract.json has no rule ${name}`);
  }
  return { pattern: new RegExp(rule.pattern), maxLength: rule.max_length };
}

/**
 * Whether `value` is allowed by the rule `name` (pattern and length).
 */
export function matches(name: RuleName, value: string): boolean {
  const rule = valueRule(name);
  return value.length <= rule.maxLength && rule.pattern.test(value);
}

/**
 * The variables the Trainer sets on every node (the webhook rejects them).
 */
export const RESERVED_ENV: readonly string[] = contract.k8s.reserved_env;

/**
 * A quantity's suffixes and their factors (`Mi` → 2^20, `m` → 0.001).
 */
export const QUANTITY_SUFFIXES: Readonly<Record<string, number>> =
  contract.k8s.quantity_suffixes;

/**
 * A job option's kind and bounds, by its REST name (`nodes`,
 * `procs_per_node`, ...); an empty rule for an option the table lacks.
 */
export function optionRule(name: string): IOptionRule {
  return contract.options[name] ?? { kind: 'unknown' };
}

/**
 * The metrics constants.
 */
export const METRICS: Readonly<IMetricsContract> = contract.metrics;

/**
 * The volume short forms' facts.
 */
export const VOLUMES: Readonly<IVolumesContract> = contract.volumes;

/**
 * The sweeps' rules.
 */
export const SWEEP: Readonly<ISweepContract> = contract.sweep;

/**
 * The cell tag that leaves a cell out of the job (`kale_ext/compile/notebook.py`'s
 * `TAGS`): a cell the panel inserts carries it.
 */
export const SKIP_TAG: string = contract.tags.skip;

/**
 * The states a jobs list is narrowed to, as `kale-ext jobs --status` names
 * them (`kale_ext/display.py`'s `STATUSES`).
 */
export const JOB_STATUSES: readonly string[] = contract.jobs.statuses;
