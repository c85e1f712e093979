import * as React from 'react';

import type { GpuMode, IJobForm } from '../../form/model';
import type { Kale } from '../../types';
import type { IFieldError } from '../../form/errors';
import { SelectField, TextField, errorOf } from '../shared/fields';
import { formatPlace } from '../shared/format';

export interface IFormProps {
  form: IJobForm;
  errors: IFieldError[];
  onChange: (change: Partial<IJobForm>) => void;
}

/**
 * The runtime picker and what the chosen runtime brings.
 */
export function RuntimePicker(
  props: IFormProps & {
    runtimes: Kale.IRuntime[];
    runtime?: Kale.IRuntime;
    resolved?: string;
  }
): JSX.Element {
  const { form, runtimes, runtime } = props;
  const options = [
    {
      value: '',
      label: props.resolved ? `Default (${props.resolved})` : 'Default'
    },
    ...runtimes.map(r => ({
      value: r.name,
      label: `${r.name} (${r.framework || 'unknown framework'})`
    }))
  ];
  if (form.runtime && !runtimes.some(r => r.name === form.runtime)) {
    options.push({ value: form.runtime, label: `${form.runtime} (not found)` });
  }
  const accelerators = Object.entries(runtime?.accelerators ?? {});
  return (
    <>
      <SelectField
        label="Runtime"
        name="runtime"
        value={form.runtime}
        options={options}
        onChange={value => props.onChange({ runtime: value })}
      />
      {runtime && (
        <dl
          className="kale-ext-Facts"
          aria-label={`Details of runtime ${runtime.name}`}
        >
          <dt>Framework</dt>
          <dd>{runtime.framework || '—'}</dd>
          <dt>Image</dt>
          <dd className="kale-ext-Facts-code">{runtime.image || '—'}</dd>
          <dt>Default nodes</dt>
          <dd>{runtime.num_nodes}</dd>
          <dt>Accelerators</dt>
          <dd>
            {accelerators.length
              ? accelerators.map(([k, v]) => `${k}: ${v}`).join(', ')
              : 'none'}
          </dd>
        </dl>
      )}
    </>
  );
}

/**
 * Which train() call of a Kubeflow SDK notebook is the job, when it has
 * several (or a choice is kept that the notebook no longer has).
 */
export function TrainCallChoice(
  props: IFormProps & { calls: Kale.ITrainCall[] }
): JSX.Element | null {
  const { form, calls } = props;
  const error = errorOf(props.errors, 'trainCall');
  if (calls.length < 2 && form.trainCall === '') {
    return null;
  }
  const last = calls.length;
  const options = [
    {
      value: '',
      label: last > 0 ? `Default: the last (call ${last})` : 'Default: the last'
    },
    ...calls.map((call, i) => ({
      value: String(i + 1),
      label:
        `Call ${i + 1}: ${formatPlace(call.cell, call.line)}` +
        (i + 1 === last ? ' (the last)' : '')
    }))
  ];
  if (form.trainCall && !options.some(o => o.value === form.trainCall)) {
    options.push({
      value: form.trainCall,
      label: `Call ${form.trainCall} (not found)`
    });
  }
  return (
    <>
      <SelectField
        label="train() call"
        name="trainCall"
        value={form.trainCall}
        options={options}
        onChange={trainCall => props.onChange({ trainCall })}
      />
      {error && (
        <div className="kale-ext-Field-error" role="alert">
          {error}
        </div>
      )}
    </>
  );
}

/**
 * The Kueue LocalQueue the job waits in for quota: "None", or one the
 * namespace lists (a kept choice it no longer lists stays, marked). Nothing
 * when there are none to choose (the local backend, a cluster without
 * Kueue) and none is chosen.
 */
export function QueueChoice(
  props: IFormProps & { queues: Kale.IQueues | null }
): JSX.Element | null {
  const { form } = props;
  const listed = props.queues?.queues ?? [];
  if (listed.length === 0 && form.queue === '') {
    return null;
  }
  const options = [
    { value: '', label: 'None' },
    ...listed.map(q => ({
      value: q.name,
      label: q.cluster_queue
        ? `${q.name} (ClusterQueue ${q.cluster_queue})`
        : q.name
    }))
  ];
  if (form.queue && !listed.some(q => q.name === form.queue)) {
    options.push({ value: form.queue, label: `${form.queue} (not found)` });
  }
  const error = errorOf(props.errors, 'queue');
  return (
    <>
      <SelectField
        label="Queue"
        name="queue"
        value={form.queue}
        options={options}
        onChange={queue => props.onChange({ queue })}
      />
      {error && (
        <div className="kale-ext-Field-error" role="alert">
          {error}
        </div>
      )}
    </>
  );
}

/**
 * Job name, nodes and processes per node.
 */
export function ShapeFields(
  props: IFormProps & {
    runtime?: Kale.IRuntime;
    compile?: Kale.ICompileResult | null;
  }
): JSX.Element {
  const { form, errors, onChange, runtime, compile } = props;
  const defaultNodes = compile?.nodes ?? runtime?.num_nodes;
  return (
    <>
      <TextField
        label="Job name"
        name="name"
        value={form.name}
        placeholder={compile?.job_name ?? 'generated'}
        hint={
          form.name.trim() === '' && compile?.job_name
            ? 'Empty: the job is submitted under the name shown'
            : undefined
        }
        error={errorOf(errors, 'name')}
        onChange={name => onChange({ name })}
      />
      <div className="kale-ext-Pair">
        <TextField
          label="Nodes"
          name="nodes"
          numeric
          value={form.nodes}
          placeholder={defaultNodes !== undefined ? String(defaultNodes) : '1'}
          error={errorOf(errors, 'nodes')}
          onChange={nodes => onChange({ nodes })}
        />
        <TextField
          label="Processes per node"
          name="procsPerNode"
          numeric
          value={form.procsPerNode}
          placeholder={String(compile?.procs_per_node ?? 1)}
          error={errorOf(errors, 'procsPerNode')}
          onChange={procsPerNode => onChange({ procsPerNode })}
        />
      </div>
      <TextField
        label="Restarts"
        name="maxRestarts"
        numeric
        value={form.maxRestarts}
        placeholder="0"
        hint="when a node fails, the whole job starts again, up to this many times"
        error={errorOf(errors, 'maxRestarts')}
        onChange={maxRestarts => onChange({ maxRestarts })}
      />
    </>
  );
}

/**
 * GPUs (a count or a MIG profile), CPU and memory per node.
 */
export function ResourceFields(
  props: IFormProps & {
    /** The default GPUs per node, which "none chosen" gets. */
    defaultGpu?: number | string | null;
    /** The job runs on the Local backend, where no kubelet applies them. */
    local?: boolean;
    /** What the server says a Local run does with CPU and memory. */
    reported?: Kale.ILocalResources | null;
  }
): JSX.Element {
  const { form, errors, onChange, defaultGpu } = props;
  const hints = props.local ? localHints(form, errors, props.reported) : null;
  // Choosing nothing leaves the GPUs to the defaults.
  const unset =
    !defaultGpu || defaultGpu === '0' ? 'None' : `Default (${defaultGpu})`;
  return (
    <>
      <div className="kale-ext-Pair">
        <SelectField
          label="GPUs per node"
          name="gpuMode"
          value={form.gpuMode}
          options={[
            { value: 'none', label: unset },
            { value: 'count', label: 'Whole GPUs' },
            { value: 'mig', label: 'MIG profile' }
          ]}
          onChange={value => onChange({ gpuMode: value as GpuMode })}
        />
        {form.gpuMode === 'count' && (
          <TextField
            label="GPU count"
            name="gpuCount"
            numeric
            value={form.gpuCount}
            placeholder="1"
            error={errorOf(errors, 'gpuCount')}
            onChange={gpuCount => onChange({ gpuCount })}
          />
        )}
        {form.gpuMode === 'mig' && (
          <TextField
            label="MIG profile"
            name="migProfile"
            value={form.migProfile}
            placeholder="mig-1g.5gb"
            error={errorOf(errors, 'migProfile')}
            onChange={migProfile => onChange({ migProfile })}
          />
        )}
      </div>
      <div className="kale-ext-Pair">
        <TextField
          label="CPU request"
          name="cpuRequest"
          ariaLabel="CPU request per node"
          value={form.cpuRequest}
          placeholder="e.g. 500m"
          error={errorOf(errors, 'cpuRequest')}
          onChange={cpuRequest => onChange({ cpuRequest })}
        />
        <TextField
          label="CPU limit"
          name="cpuLimit"
          ariaLabel="CPU limit per node"
          value={form.cpuLimit}
          placeholder="e.g. 2"
          error={errorOf(errors, 'cpuLimit')}
          onChange={cpuLimit => onChange({ cpuLimit })}
        />
      </div>
      {hints?.cpu && (
        <div className="kale-ext-Field-hint" data-hint="cpu">
          {hints.cpu}
        </div>
      )}
      <div className="kale-ext-Pair">
        <TextField
          label="Memory request"
          name="memoryRequest"
          ariaLabel="Memory request per node"
          value={form.memoryRequest}
          placeholder="e.g. 1Gi"
          error={errorOf(errors, 'memoryRequest')}
          onChange={memoryRequest => onChange({ memoryRequest })}
        />
        <TextField
          label="Memory limit"
          name="memoryLimit"
          ariaLabel="Memory limit per node"
          value={form.memoryLimit}
          placeholder="e.g. 4Gi"
          error={errorOf(errors, 'memoryLimit')}
          onChange={memoryLimit => onChange({ memoryLimit })}
        />
      </div>
      {hints?.memory && (
        <div className="kale-ext-Field-hint" data-hint="memory">
          {hints.memory}
        </div>
      )}
    </>
  );
}

/**
 * What CPU and memory per node do on the Local backend, in the server's
 * words (its last preview), each only when its fields hold a value and
 * none of them has an error: null otherwise (no hint about a value no one
 * set, nor while the form or the notebook has an error and no preview
 * says).
 */
export function localHints(
  form: IJobForm,
  errors: IFieldError[],
  reported?: Kale.ILocalResources | null
): { cpu: string | null; memory: string | null } {
  const hint = (fields: (keyof IJobForm & string)[], text?: string) =>
    text &&
    fields.some(f => String(form[f]).trim() !== '') &&
    fields.every(f => !errorOf(errors, f))
      ? `Locally: ${text}`
      : null;
  return {
    cpu: hint(['cpuRequest', 'cpuLimit'], reported?.cpu),
    memory: hint(['memoryRequest', 'memoryLimit'], reported?.memory)
  };
}
