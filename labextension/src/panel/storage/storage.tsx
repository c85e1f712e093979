import * as React from 'react';

import { VOLUMES } from '../../contract';
import { Button, TextField, errorOf } from '../shared/fields';
import type { IFormProps } from '../form/job-form';

/**
 * Storage: the volumes every node mounts (short forms, one a row, each
 * checked as typed), a memory-backed /dev/shm, and the volume whose files
 * outlive a job on Kubernetes.
 */
export function StorageFields(
  props: IFormProps & { local: boolean }
): JSX.Element {
  const { form, errors, onChange, local } = props;
  const update = (i: number, text: string) =>
    onChange({ volumes: form.volumes.map((v, j) => (j === i ? text : v)) });
  return (
    <div className="kale-ext-List kale-ext-Storage">
      <div className="kale-ext-Field-hint">
        {local
          ? 'Locally a pvc, secret or configmap needs the folder that stands for it: pvc:data:/data=./data'
          : `Forms: ${VOLUMES.forms}. A relative mount is inside the working directory.`}
      </div>
      {form.volumes.length === 0 && (
        <p className="kale-ext-Muted">No volumes.</p>
      )}
      {form.volumes.map((text, i) => (
        <div key={i} className="kale-ext-Row kale-ext-VolumeRow">
          <TextField
            label={`Volume ${i + 1}`}
            name={`volumes.${i}`}
            value={text}
            placeholder={local ? 'pvc:data:/data=./data' : 'pvc:data:/data:ro'}
            error={errorOf(errors, `volumes.${i}`)}
            onChange={value => update(i, value)}
          />
          <Button
            kind="link"
            aria-label={`Remove volume ${i + 1}`}
            onClick={() =>
              onChange({ volumes: form.volumes.filter((_, j) => j !== i) })
            }
          >
            Remove
          </Button>
        </div>
      ))}
      <Button onClick={() => onChange({ volumes: [...form.volumes, ''] })}>
        Add volume
      </Button>
      <div className="kale-ext-Pair">
        <TextField
          label="Shared memory"
          ariaLabel="Shared memory (/dev/shm) size"
          name="shmSize"
          value={form.shmSize}
          placeholder="e.g. 2Gi"
          hint={local ? "Locally the machine's own /dev/shm" : undefined}
          error={errorOf(errors, 'shmSize')}
          onChange={shmSize => onChange({ shmSize })}
        />
        <TextField
          label="Outputs volume"
          name="outputs"
          value={form.outputs}
          placeholder="pvc:NAME"
          hint={
            local
              ? 'Locally outputs/<job>/ beside the notebook'
              : `Without one, outputs go with the pod (mounted at ${VOLUMES.outputs_mount})`
          }
          error={errorOf(errors, 'outputs')}
          onChange={outputs => onChange({ outputs })}
        />
      </div>
    </div>
  );
}
