import { Clipboard } from '@jupyterlab/apputils';
import type { JSONValue } from '@lumino/coreutils';
import * as React from 'react';

import type { ISweepForm } from '../../form/sweep';
import type { Kale } from '../../types';
import { Button } from '../shared/fields';
import { formatPlace } from '../shared/format';
import {
  parameterOverrides,
  sweepSummary,
  type IOverride,
  type ISweepSummary
} from './differs';
import { foldYaml } from './preview-yaml';
import { WorkspaceFact } from './workspace';

/**
 * What submitting will do, read first: the job's name, what it changes
 * from the notebook (parameters, a sweep's trials), where it runs, its
 * shape, resources, runtime, packages and files; the compiled function to
 * read; then the TrainJob YAML with its bulk folded, to copy or download.
 */
export function PreviewView(props: {
  compile: Kale.ICompileResult | null;
  backend: Kale.IBackend | null;
  runtime?: Kale.IRuntime;
  /** The packages the user edited (null: the detected ones). */
  packages: string[] | null;
  /** The options the panel sends (what overrides the notebook's settings). */
  options?: Kale.IJobOptions;
  /** Open the notebook at a cell and line (as the checks' links do). */
  onSelect?: (place: Kale.IDiagnostic) => void;
  /** The sweep the form describes (Submit starts it when a parameter sweeps). */
  sweep?: ISweepForm;
  /** Open the compiled function, read-only. */
  onViewSource?: (name: string, source: string) => void;
}): JSX.Element {
  const { compile, onViewSource } = props;
  if (!compile?.trainjob_yaml) {
    return (
      <p className="kale-ext-Muted">
        {compile && !compile.ok
          ? 'Fix the errors to see what the job will be.'
          : 'No preview yet.'}
      </p>
    );
  }
  return (
    <div className="kale-ext-Preview">
      <PreviewSummary
        {...props}
        compile={compile}
        overrides={parameterOverrides(
          compile.parameters,
          props.options?.parameters as { [name: string]: JSONValue },
          Object.keys(props.sweep?.params ?? {})
        )}
        sweep={
          props.sweep ? sweepSummary(props.sweep, compile.parameters) : null
        }
      />
      {compile.source && onViewSource && (
        <div className="kale-ext-Row">
          <Button
            onClick={() =>
              onViewSource(compile.function_name ?? 'train', compile.source!)
            }
          >
            View compiled function
          </Button>
        </div>
      )}
      {compile.provenance && compile.provenance.length > 0 && (
        <NotebookSettings
          provenance={compile.provenance}
          options={props.options ?? {}}
          onSelect={props.onSelect}
        />
      )}
      <TrainJobYaml
        name={compile.job_name ?? 'trainjob'}
        yaml={compile.trainjob_yaml}
      />
    </div>
  );
}

/**
 * What the job installs: each package, where it came from and when start-up
 * installs it; whether versions are pinned to this machine's, and why.
 */
function PackageSources(props: {
  sources: Kale.IPackageSource[];
  pinning: { on: boolean; why: string } | null;
}): JSX.Element {
  const { sources, pinning } = props;
  if (!sources.length) {
    return <>none</>;
  }
  return (
    <>
      <ul className="kale-ext-PackageSources">
        {sources.map(p => (
          <li key={p.requirement} title={`installed ${p.when}`}>
            <code>{p.requirement}</code>: {p.origin}; installed {p.when}
          </li>
        ))}
      </ul>
      {pinning && (
        <div className="kale-ext-Muted">
          pinning {pinning.on ? 'on' : 'off'} ({pinning.why})
        </div>
      )}
    </>
  );
}

function PreviewSummary(props: {
  compile: Kale.ICompileResult;
  backend: Kale.IBackend | null;
  runtime?: Kale.IRuntime;
  packages: string[] | null;
  overrides: IOverride[];
  sweep: ISweepSummary | null;
}): JSX.Element {
  const { compile, backend, runtime, overrides, sweep } = props;
  const hasParameters = Object.keys(compile.parameters ?? {}).length > 0;
  const local = backend?.name === 'local';
  const nodes = compile.nodes ?? 1;
  const procs = compile.procs_per_node ?? 1;
  const packages = props.packages ?? compile.packages ?? [];
  return (
    <dl
      className="kale-ext-Facts kale-ext-PreviewSummary"
      aria-label="What the job will be"
    >
      <dt>Job</dt>
      <dd className="kale-ext-Facts-code" data-fact="name">
        {compile.job_name}
      </dd>
      {(hasParameters || overrides.length > 0) && (
        <>
          <dt>Parameters</dt>
          <dd data-fact="parameters">
            {overrides.length ? (
              <ul className="kale-ext-Overrides" aria-label="Parameters set">
                {overrides.map(o => (
                  <li key={o.name} data-parameter={o.name}>
                    <code>{o.name}</code>: {o.from || '(no default)'} →{' '}
                    <strong>{o.to}</strong>
                  </li>
                ))}
              </ul>
            ) : (
              'the notebook’s defaults'
            )}
          </dd>
        </>
      )}
      {sweep && (
        <>
          <dt>Sweep</dt>
          <dd data-fact="sweep">
            {Private.trials(sweep, compile.job_name)}
            <ul className="kale-ext-Overrides" aria-label="Swept values">
              {sweep.dimensions.map(d => (
                <li key={d.name} data-parameter={d.name}>
                  <code>{d.name}</code>: {d.values}
                </li>
              ))}
            </ul>
          </dd>
        </>
      )}
      <dt>Backend</dt>
      <dd data-fact="backend">
        {!backend
          ? '—'
          : local
            ? 'Local: processes on this machine'
            : `Kubernetes${backend.namespace ? `, namespace ${backend.namespace}` : ''}`}
      </dd>
      <dt>Shape</dt>
      <dd>
        {/* one <dd> per <dt>: the list is a two-column grid, and a <dd> of its own moved every
            fact after it one cell */}
        <span data-fact="shape">
          {compile.shape ?? (
            <>
              {Private.plural(nodes, 'node')} ×{' '}
              {Private.plural(procs, 'process', 'processes')}
            </>
          )}
        </span>
        {compile.procs_why && (
          <div data-fact="procs-why" className="kale-ext-Muted">
            processes per node: {compile.procs_why}
          </div>
        )}
      </dd>
      <dt>Resources</dt>
      <dd data-fact="resources">{Private.resources(compile.config)}</dd>
      <dt>Runtime</dt>
      <dd data-fact="runtime">
        {compile.runtime}
        {runtime?.image && (
          <>
            {' · '}
            <code>{runtime.image}</code>
          </>
        )}
      </dd>
      <dt>Packages</dt>
      <dd data-fact="packages">
        {compile.package_sources ? (
          <PackageSources
            sources={compile.package_sources}
            pinning={compile.pinning ?? null}
          />
        ) : packages.length ? (
          packages.join(', ')
        ) : (
          'none'
        )}
        {props.packages !== null && ' (edited)'}
      </dd>
      <dt>Workspace</dt>
      <dd data-fact="workspace">
        <WorkspaceFact workspace={compile.workspace} />
      </dd>
      {compile.volumes && compile.volumes.length > 0 && (
        <>
          <dt>Volumes</dt>
          <dd data-fact="volumes">
            {compile.volumes.map(v => Private.volume(v, local)).join('; ')}
          </dd>
        </>
      )}
      {compile.outputs && (
        <>
          <dt>Outputs</dt>
          <dd data-fact="outputs">{compile.outputs}</dd>
        </>
      )}
      {local && (
        <>
          <dt>Runs</dt>
          <dd data-fact="command">
            {Private.plural(nodes, 'process', 'processes')} here, one per node,
            each with <code>PET_NNODES={nodes}</code>,{' '}
            <code>PET_NODE_RANK=0{nodes > 1 ? `…${nodes - 1}` : ''}</code>,{' '}
            <code>PET_MASTER_ADDR=127.0.0.1</code>, running
            {compile.command ? (
              <pre
                className="kale-ext-Command"
                tabIndex={0}
                aria-label="Local command"
              >
                {compile.command}
              </pre>
            ) : (
              ' the trainer command of the TrainJob below'
            )}
          </dd>
        </>
      )}
    </dl>
  );
}

/**
 * Each setting read from the notebook's train() call: its value, where it
 * is (a link to the cell and line), and the panel's value when that wins.
 */
function NotebookSettings(props: {
  provenance: Kale.IProvenance[];
  options: Kale.IJobOptions;
  onSelect?: (place: Kale.IDiagnostic) => void;
}): JSX.Element {
  const { options, onSelect } = props;
  return (
    <>
      <div className="kale-ext-Muted">
        Read from the notebook&apos;s train() call
      </div>
      <dl
        className="kale-ext-Facts kale-ext-PreviewProvenance"
        aria-label="Read from the notebook"
      >
        {props.provenance.map(p => {
          const place = formatPlace(p.cell, p.line);
          return (
            <React.Fragment key={p.setting}>
              <dt>{p.setting}</dt>
              <dd data-setting={p.setting}>
                <code>{Private.value(p.value)}</code>{' '}
                {onSelect ? (
                  <Button
                    kind="link"
                    aria-label={`Go to ${place}`}
                    onClick={() =>
                      onSelect({
                        severity: 'warning',
                        message: p.setting,
                        cell: p.cell,
                        line: p.line
                      })
                    }
                  >
                    {place}
                  </Button>
                ) : (
                  place
                )}
                {p.overridden_by.length > 0 && (
                  <strong className="kale-ext-Overridden">
                    {' '}
                    overridden by the panel:{' '}
                    {Private.overrides(p.overridden_by, options)}
                  </strong>
                )}
              </dd>
            </React.Fragment>
          );
        })}
      </dl>
    </>
  );
}

function TrainJobYaml(props: { name: string; yaml: string }): JSX.Element {
  const { name, yaml } = props;
  const [copied, setCopied] = React.useState(false);
  const pieces = React.useMemo(() => foldYaml(yaml), [yaml]);
  React.useEffect(() => setCopied(false), [yaml]);
  return (
    <div className="kale-ext-PreviewYaml">
      <div className="kale-ext-Row">
        <span className="kale-ext-Muted">TrainJob</span>
        <Button
          onClick={() => {
            Clipboard.copyToSystem(yaml);
            setCopied(true);
          }}
        >
          {copied ? 'Copied' : 'Copy'}
        </Button>
        <Button onClick={() => Private.download(`${name}.yaml`, yaml)}>
          Download YAML
        </Button>
      </div>
      <pre className="kale-ext-Yaml" tabIndex={0} aria-label="TrainJob YAML">
        {pieces.map((piece, i) =>
          piece.kind === 'text' ? (
            <React.Fragment key={i}>{piece.text}</React.Fragment>
          ) : (
            <details key={i} className="kale-ext-Fold">
              <summary>{piece.label}</summary>
              {piece.text}
            </details>
          )
        )}
      </pre>
    </div>
  );
}

namespace Private {
  /**
   * A value as the notebook resolves it, in a line of at most 80 characters.
   */
  export function value(v: unknown): string {
    const text = typeof v === 'string' ? v : JSON.stringify(v);
    return text.length > 80 ? `${text.slice(0, 77)}...` : text;
  }

  /**
   * The panel's values that win: "4", or "cpu 2, memory 4Gi" for several.
   */
  export function overrides(
    names: string[],
    options: Kale.IJobOptions
  ): string {
    const given = names.filter(n => options[n] !== undefined);
    if (given.length === 1 && names.length === 1) {
      return value(options[given[0]]);
    }
    return names
      .map(n => (options[n] !== undefined ? `${n} ${value(options[n])}` : n))
      .join(', ');
  }

  /**
   * A sweep's trials in words: "6 trials (grid: every combination), named
   * nb-x-0 … nb-x-5".
   */
  export function trials(sweep: ISweepSummary, name?: string): string {
    const how =
      sweep.search === 'grid'
        ? 'grid: every combination'
        : `${sweep.search === 'tpe' ? 'TPE' : sweep.search} search`;
    if (sweep.trials === null) {
      return `trials not known yet (${how}): see the sweep's fields`;
    }
    const named =
      name && sweep.trials > 0
        ? `, named ${name}-0${sweep.trials > 1 ? ` … ${name}-${sweep.trials - 1}` : ''}`
        : '';
    return `${plural(sweep.trials, 'trial')} (${how})${named}`;
  }

  export function plural(n: number, one: string, many = `${one}s`): string {
    return `${n} ${n === 1 ? one : many}`;
  }

  /**
   * A node's requests and limits in a line: "CPU 500m–2 · memory 4Gi".
   */
  export function resources(
    config: Kale.IDistributedConfig | undefined
  ): string {
    const requests = config?.requests ?? {};
    const limits = config?.limits ?? {};
    const names = [
      ...new Set([...Object.keys(requests), ...Object.keys(limits)])
    ];
    if (names.length === 0) {
      return 'none requested';
    }
    const label = (key: string) =>
      key === 'cpu'
        ? 'CPU'
        : key === 'nvidia.com/gpu'
          ? 'GPU'
          : key.replace(/^nvidia\.com\//, '');
    return names
      .map(key => {
        const low = requests[key];
        const high = limits[key];
        const range =
          low && high && low !== high ? `${low}–${high}` : (high ?? low);
        return `${label(key)} ${range}`;
      })
      .join(' · ');
  }

  /**
   * A volume in words: "pvc data at /data, read-only (here: ./data)".
   */
  export function volume(v: Kale.IVolumeMount, local: boolean): string {
    const what = v.source ? `${v.kind} ${v.source}` : v.kind;
    const ro = v.read_only ? ', read-only' : '';
    const here = local && v.local ? ` (here: ${v.local})` : '';
    return `${what} at ${v.mount_path}${ro}${here}`;
  }

  export function download(file: string, text: string): void {
    const url = URL.createObjectURL(
      new Blob([text], { type: 'application/yaml' })
    );
    const a = document.createElement('a');
    a.href = url;
    a.download = file;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  }
}
