import type { INotebookContent } from '@jupyterlab/nbformat';
import type { JSONObject, JSONValue } from '@lumino/coreutils';

/**
 * The kale_ext REST API's types, mirroring `docs/rest-api.md`.
 */
export namespace Kale {
  /**
   * A compile error or warning; `cell` is the 0-based index among all cells.
   */
  export interface IDiagnostic {
    severity: 'error' | 'warning';
    message: string;
    cell: number | null;
    cell_id?: string | null;
    line?: number | null;
    code?: string;
    /** A config error names the option it is about. */
    field?: string;
  }

  /**
   * An environment variable in Kubernetes JSON form.
   */
  export interface IEnvVar {
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: { name: string; key: string } } & JSONObject;
  }

  /**
   * A DistributedConfig dict: the fields the panel edits, and any other.
   */
  export interface IDistributedConfig {
    env?: IEnvVar[];
    requests?: Record<string, string>;
    limits?: Record<string, string>;
    [key: string]: JSONValue | IEnvVar[] | undefined;
  }

  /**
   * Submit-time choices (all optional).
   */
  export interface IJobOptions {
    name?: string;
    runtime?: string;
    nodes?: number;
    procs_per_node?: number;
    max_restarts?: number;
    gpu?: number | string;
    cpu?: string;
    memory?: string;
    image?: string;
    parameters?: { [name: string]: JSONValue };
    packages?: string[];
    /** Pin packages without a version to the versions installed here
     * (unset: on for local runs, off on a cluster). */
    pin_packages?: boolean;
    pip_index_urls?: string[];
    env?: Record<string, string>;
    config?: IDistributedConfig;
    dataset_uri?: string;
    model_uri?: string;
    /** Volume short forms: `pvc:NAME:/mount[:ro]`, ... */
    volumes?: string[];
    shm_size?: string;
    /** The outputs volume on Kubernetes, `pvc:NAME[:/mount]`. */
    outputs?: string;
    /** The Kueue LocalQueue the job waits in for quota. */
    queue?: string;
    [key: string]: JSONValue | IDistributedConfig | undefined;
  }

  /**
   * What the panel stores in `metadata.kale_ext`.
   */
  export interface INotebookMetadata {
    options: IJobOptions;
    config: IDistributedConfig;
    /** The sweep settings, when any differs from a new form. */
    sweep?: ISweepSettings;
  }

  /**
   * The notebook to compile or submit: a path below the server root, or its JSON.
   */
  export type NotebookSource =
    | { path: string; notebook?: undefined }
    | { notebook: INotebookContent; path?: string };

  /**
   * The body of `POST compile` and `POST jobs`.
   */
  export type JobRequest = NotebookSource & { options?: IJobOptions };

  export interface ICompileResult {
    ok: boolean;
    errors: IDiagnostic[];
    warnings: IDiagnostic[];
    function_name?: string;
    source?: string;
    parameters?: { [name: string]: JSONValue };
    packages?: string[];
    config?: IDistributedConfig;
    runtime?: string;
    nodes?: number;
    procs_per_node?: number;
    /** `2 nodes × 4 processes`: the nodes and the processes per node. */
    shape?: string | null;
    /** Where the processes per node come from: `asked`, or what the
     * runtime will choose (`the runtime's choice: 4 CPUs per node`). */
    procs_why?: string | null;
    job_name?: string;
    trainjob_yaml?: string;
    /** The files the job gets as its working directory (none: null). */
    workspace?: IWorkspace | null;
    /** Every object a cluster submit creates (ConfigMaps, the TrainJob). */
    creates?: { kind: string; name: string; size?: number }[];
    /** The job's own volume mounts. */
    volumes?: IVolumeMount[];
    /** The outputs volume, `pvc:NAME:/mount` (null: none). */
    outputs?: string | null;
    /** The exact command each node runs, when the server reports it. */
    command?: string | null;
    /** What a Local run does with CPU and memory, when the server says. */
    local_resources?: ILocalResources | null;
    /** Each setting read from a Kubeflow SDK notebook's train() call. */
    provenance?: IProvenance[];
    /** Where the notebook's train() calls are, in order (empty: none). */
    train_calls?: ITrainCall[];
    /** What the job installs (options and pinning applied), each with where it
     * came from and when start-up installs it. */
    package_sources?: IPackageSource[];
    /** Whether packages without a version are pinned to the versions installed
     * here, and why. */
    pinning?: { on: boolean; why: string } | null;
  }

  /**
   * A package of the job (`POST compile`'s `package_sources`).
   */
  export interface IPackageSource {
    requirement: string;
    source: 'import' | 'pip' | 'sdk' | 'option';
    /** The cell's 0-based index, as in IDiagnostic (null: not from a cell). */
    cell: number | null;
    line: number | null;
    module: string | null;
    pinned: boolean;
    pinned_here: boolean;
    check: 'import' | 'version' | 'pip';
    /** Where it came from, in words. */
    origin: string;
    /** When start-up installs it, in words. */
    when: string;
  }

  /**
   * One train() call of a Kubeflow SDK notebook (`POST compile`'s
   * `train_calls`): where it is.
   */
  export interface ITrainCall {
    /** The cell's 0-based index, as in IDiagnostic. */
    cell: number;
    line: number;
  }

  /**
   * A setting read from the notebook's train() call: where, and the options
   * that win over it (`POST compile`'s `provenance`).
   */
  export interface IProvenance {
    setting: string;
    value: JSONValue;
    /** The cell's 0-based index, as in IDiagnostic. */
    cell: number;
    line: number | null;
    overridden_by: string[];
  }

  /**
   * A node's CPU and memory on the Local backend, a line each.
   */
  export interface ILocalResources {
    cpu?: string;
    memory?: string;
  }

  /**
   * `GET jobs/{name}/outputs`: what a job wrote to `KALE_EXT_OUTPUT_DIR`.
   */
  export interface IJobOutputs {
    location: string;
    /** `link`: a symbolic link's target as the job wrote it (listed, never followed). */
    files: { path: string; size: number; link?: string }[];
    note: string | null;
    /** False: the backend cannot list them (a volume on a cluster). */
    listed: boolean;
    /** `location` below the server root, where Jupyter serves the files
     * (null: not under it, hidden, or still in the nodes' folders). */
    root_path?: string | null;
  }

  /**
   * A volume a job's nodes mount (`POST compile`'s `volumes`).
   */
  export interface IVolumeMount {
    name: string;
    kind: string;
    source: string | null;
    mount: string;
    mount_path: string;
    read_only: boolean;
    /** The folder that stands for it in a local run. */
    local: string | null;
  }

  /**
   * A job's workspace (`kale_ext/job/workspace.py`): the folder, relative to
   * the server root, and what it holds.
   */
  export interface IWorkspace {
    root: string;
    files: number;
    size: number;
    max_size: number;
    excluded: number;
    largest: { path: string; size: number }[];
    skipped: { path: string; reason: string }[];
    modules: string[];
    /** Its files (the first 1000), with their sizes. */
    list?: { path: string; size: number }[];
    list_truncated?: boolean;
  }

  /**
   * `GET queues`: the namespace's Kueue LocalQueues a job may wait in, and
   * why there are none (the local backend, a cluster without Kueue).
   */
  export interface IQueue {
    name: string;
    cluster_queue: string | null;
    pending: number | null;
    admitted: number | null;
  }

  export interface IQueues {
    queues: IQueue[];
    reason: string | null;
  }

  export interface IRuntime {
    name: string;
    framework: string;
    kind: string;
    image: string;
    num_nodes: number;
    accelerators: Record<string, string>;
    initializers: string[];
  }

  /**
   * `GET runtimes/{name}/packages`: the Python distributions of a runtime's
   * image (canonical name → version, sorted), or null when the server does
   * not know them yet (a probe finds them). `source` says where they came
   * from: the server's own environment (local backend), an earlier probe's
   * cache, or the probe just run.
   */
  export interface IRuntimePackages {
    runtime: string;
    packages: Record<string, string> | null;
    source: 'environment' | 'cache' | 'probe' | null;
  }

  export interface ISubmitResult {
    name: string;
    backend: string;
    warnings: string[];
  }

  export type JobStatus =
    'Created' | 'Queued' | 'Running' | 'Complete' | 'Failed' | 'Unreadable';

  export interface INodeState {
    index: number;
    state: string;
    reason?: string | null;
    exit_code?: number | null;
  }

  export interface IJobInfo {
    name: string;
    status: JobStatus;
    reason?: string | null;
    backend: string;
    runtime: string;
    num_nodes: number;
    procs_per_node: number;
    /** Where procs_per_node comes from: `asked`, or `the runtime's choice: 4 CPUs per node`. */
    procs_why?: string | null;
    nodes: INodeState[];
    created?: string | null;
    finished?: string | null;
    provenance?: { [key: string]: JSONValue };
    /** The status as every view shows it (a quiet running job: Stalled). */
    status_text?: string;
    /** Why the job failed (every Failed job has one). */
    failure?: IFailure | null;
    /** When a running job last wrote a log line or a metric. */
    last_output?: string | null;
    /** Set while a running job has been quiet this many seconds (Stalled). */
    stalled_after?: number | null;
    /** While its other nodes are stopped after one failed: which, and how. */
    failing?: string | null;
    /** The sweep it is a trial of, or null. */
    sweep?: string | null;
    /** How far it is, as last reported or inferred (null: never reported). */
    progress?: IProgress | null;
    /** What its function returned, once it ended (`GET jobs/{name}`). */
    result?: IJobResult | null;
    /** What a local job's folder takes on disk (`GET jobs`; null: unknown). */
    disk_bytes?: number | null;
    /** The count stopped at its bound: at least `disk_bytes`. */
    disk_partial?: boolean;
    /** Whose checkpoints it shares: its parent's lineage, else its own name. */
    lineage?: string;
    /** The job it was resumed from (`POST jobs/{name}/resume`), or null. */
    parent?: string | null;
    /** The checkpoint step its parent last reported when it was resumed. */
    resume_step?: number | null;
    /** The last checkpoint it reported (`checkpoint_step`), or null. */
    checkpoint?: ICheckpoint | null;
  }

  /** `POST jobs/prune`: which finished jobs go. */
  export interface IPruneBody {
    /** An age: a whole number and s, m, h, d or w (`7d`). */
    older_than: string;
    statuses?: ('complete' | 'failed' | 'stopped')[];
    dry_run?: boolean;
    outputs?: boolean;
  }

  /** A job a prune removed (or, in a dry run, would remove). */
  export interface IPruned {
    name: string;
    status: string;
    age_seconds: number;
    disk_bytes: number | null;
    disk_partial: boolean;
    deleted: boolean;
    /** What became of its outputs, or why it stayed. */
    note: string | null;
  }

  export interface IPruneResult {
    dry_run: boolean;
    jobs: IPruned[];
  }

  /**
   * A job's last checkpoint (`kale_ext/lineage.py`): its step and when it
   * was reported (`exact` false on a cluster: when the Trainer last heard
   * from the job).
   */
  export interface ICheckpoint {
    step: number;
    time: string;
    exact: boolean;
  }

  /**
   * A job's progress (`kale_ext/progress.py`): percent done, the step or
   * epoch it is at, and the time left estimated from its recent rate (null
   * until the rate is known well enough).
   */
  export interface IProgress {
    percent: number;
    step: number | null;
    total: number | null;
    unit: 'step' | 'epoch';
    eta_seconds: number | null;
    /** Where it came from: `kale_ext.report()`, a tqdm bar on rank 0,
     * `epoch N/M` lines, Kubeflow Trainer's `trainerStatus`. */
    source: 'report' | 'tqdm' | 'epoch-line' | 'trainer';
    /** When it was last updated (ISO 8601). */
    updated: string;
  }

  /**
   * Rank 0's return value, as saved with the job (`saved: false` says why
   * in `reason`).
   */
  export interface IJobResult {
    saved: boolean;
    format: string;
    size: number;
    reason: string | null;
  }

  /**
   * `GET diff?jobs=a,b`: what differs between jobs, and the unified diff of
   * their generated functions when it changed.
   */
  export interface IComparison {
    jobs: { name: string; status: string }[];
    differences: { field: string; values: (string | null)[] }[];
    source_diffs: { from: string; to: string; diff: string }[];
  }

  /**
   * `POST sweeps`' `sweep`: the swept parameters (spec text as typed) and
   * how to search.
   */
  export interface ISweepSettings {
    params: { [name: string]: string | JSONValue[] };
    search?: string;
    trials?: number;
    parallel?: number;
    seed?: number;
    metric?: string;
    goal?: string;
    early_stop?: boolean;
    name?: string;
  }

  /**
   * The body of `POST jobs/{name}/rerun`: what changes; the rest is as
   * the job ran.
   */
  export interface IRerunBody {
    name?: string;
    parameters?: { [name: string]: JSONValue };
  }

  /**
   * The body of `POST jobs/{name}/resume`: a rerun's, and a node count.
   */
  export interface IResumeBody extends IRerunBody {
    nodes?: number;
  }

  /**
   * `GET`/`PUT panel-state?path=`: the panel's form kept for a notebook
   * (`state` as the panel stored it, read back by `form/restore.ts`).
   */
  export interface IPanelStateRecord {
    path: string;
    state: unknown;
    saved: string | null;
  }

  /**
   * A sweep's trials counted (`GET sweeps`' `counts`).
   */
  export interface ISweepCounts {
    planned: number;
    complete: number;
    failed: number;
    stopped: number;
    cancelled: number;
    running: number;
    not_started: number;
  }

  /**
   * The body of `POST sweeps`.
   */
  export type SweepRequest = JobRequest & { sweep: ISweepSettings };

  export type TrialStatus =
    'Pending' | 'Running' | 'Complete' | 'Failed' | 'Stopped' | 'Cancelled';

  /**
   * One trial of a sweep: an ordinary job.
   */
  export interface ISweepTrial {
    number: number;
    job: string;
    parameters: { [name: string]: JSONValue };
    status: TrialStatus;
    /** The metric's last value reported, at `step`. */
    metric: number | null;
    step?: number | null;
    /** Why it failed or was stopped early. */
    reason?: string | null;
    best: boolean;
  }

  /**
   * `GET sweeps/{name}`: a sweep with its trials, best first.
   */
  export interface ISweep {
    name: string;
    status:
      | 'Starting'
      | 'Running'
      | 'Complete'
      | 'Failed'
      | 'Interrupted'
      | 'Cancelled';
    reason?: string | null;
    created?: string;
    finished?: string | null;
    backend?: string;
    notebook_path?: string | null;
    search: string;
    max_trials?: number | null;
    /** The trials counted, and in words (`10 of 12 complete; 2 failed`). */
    counts?: ISweepCounts;
    tally?: string;
    /** The parameters every trial runs with besides its swept ones. */
    fixed?: { [name: string]: JSONValue };
    parallel: number;
    seed?: number | null;
    metric?: string | null;
    goal?: 'min' | 'max' | null;
    early_stop?: boolean;
    space: { [key: string]: JSONValue }[];
    /** The job of the best completed trial. */
    best: string | null;
    trials: ISweepTrial[];
  }

  /**
   * Who failed first, where in the notebook and why.
   */
  export interface IFailure {
    summary: string;
    node?: number | null;
    rank?: number | null;
    exception?: string | null;
    /** 0-based index of the notebook cell where it was raised. */
    cell_index?: number | null;
    cell_id?: string | null;
    cell_label?: string | null;
    /** 1-based line in that cell. */
    line?: number | null;
    exit_code?: number | null;
    signal?: string | null;
    reason?: string | null;
    log_tail?: string[];
  }

  export interface ILogLine {
    node: number;
    rank: number | null;
    text: string;
    offset: number;
  }

  export interface IJobEvent {
    time: string | null;
    type: string;
    reason: string;
    message: string;
    object: string;
  }

  export interface IBackend {
    name: 'local' | 'kubernetes' | string;
    reason: string;
    namespace: string | null;
  }

  /**
   * The layer that set a default, lowest first: built in, the server's
   * configuration (`c.KaleExtApp.<field>`), the user's JupyterLab settings
   * (plugin `kale-ext:plugin`).
   */
  export type DefaultsSource =
    'built in' | 'server configuration' | 'JupyterLab settings';

  /**
   * The defaults a job starts from when nothing more specific (the
   * notebook, the panel's form, a submit's options) chooses. `null`: the
   * runtime's own (or none requested).
   */
  export interface IDefaultValues {
    backend: 'auto' | 'local' | 'kubernetes';
    namespace: string | null;
    runtime: string;
    image: string | null;
    pip_index_urls: string[];
    nodes: number | null;
    cpu: string | number | null;
    memory: string | null;
    gpu: number | string | null;
  }

  /**
   * `GET defaults`: the effective defaults, and which layer set each.
   */
  export interface IDefaults {
    defaults: IDefaultValues;
    sources: { [field in keyof IDefaultValues]: DefaultsSource | string };
  }

  /**
   * A row of the tag grammar. `tag` is how it is written (`imports`,
   * `step:<name>`); `role` is the role it gives a cell, or null (a setting,
   * or a tag that is reported and ignored).
   */
  export interface ITag {
    tag: string;
    role: string | null;
    help: string;
    pattern?: string;
    setting?: string | null;
    effect?: string;
  }
}
