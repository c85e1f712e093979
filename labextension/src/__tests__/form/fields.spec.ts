import {
  bareMessage,
  fieldLabel,
  formErrors,
  formField,
  generalErrors
} from '../../form/fields';
import { emptyEnvRow } from '../../form/model';
import type { Kale } from '../../types';
import { jobForm } from '../helpers';

function configError(field: string, message: string): Kale.IDiagnostic {
  return {
    severity: 'error',
    message: `${field}: ${message}`,
    cell: null,
    code: 'config',
    field
  };
}

describe("the server's field names, as the form's", () => {
  const f = jobForm({
    gpuMode: 'mig',
    env: [{ ...emptyEnvRow(), name: 'A' }],
    packages: ['numpy']
  });
  it.each([
    ['requests.cpu', 'cpuRequest'],
    ['config.limits.memory', 'memoryLimit'],
    ['nodes', 'nodes'],
    ['procs_per_node', 'procsPerNode'],
    ['gpu', 'migProfile'],
    ['parameters.epochs', 'parameters.epochs'],
    ['env[0].name', 'env.0.name'],
    ['env[3].name', null], // a variable the panel does not edit
    ['packages[0]', 'packages.0'],
    ['tolerations[0].value', null],
    ['workspace', null]
  ])('%s → %s', (server, field) => {
    expect(formField(server, f)).toBe(field);
  });

  it('names the Storage rows: a volume by its row, a mount by its path', () => {
    const s = jobForm({
      volumes: ['nfs:x:/y', 'pvc:a:/data', 'emptydir:scratch'],
      shmSize: '1Gi',
      outputs: 'pvc:out'
    });
    // the server gets the volumes that read: its volumes[1] is row 3
    expect(formField('volumes[1]', s)).toBe('volumes.2');
    expect(formField('volumes[2]', s)).toBe(null);
    expect(formField('shm_size', s)).toBe('shmSize');
    expect(formField('outputs', s)).toBe('outputs');
    const mount = 'volume_mounts[1].mountPath';
    expect(
      formField(
        mount,
        s,
        `${mount}: scratch is also in the workspace (scratch)`
      )
    ).toBe('volumes.2');
    expect(formField(mount, s, `${mount}: /other collides`)).toBe(null);
  });
});

describe('labels', () => {
  it.each([
    ['memoryLimit', 'Memory limit'],
    ['name', 'Job name'],
    ['parameters.lr', 'Parameter lr'],
    ['env.0.name', 'Name of HF_TOKEN'],
    ['env.1.name', 'Name of variable 2'],
    ['env.0.secret', 'Secret of HF_TOKEN'],
    ['packages.2', 'Package 3'],
    ['volumes.1', 'Volume 2'],
    ['shmSize', 'Shared memory'],
    ['outputs', 'Outputs volume']
  ])('%s reads %j', (field, label) => {
    const f = jobForm({
      env: [
        { ...emptyEnvRow(), name: 'HF_TOKEN' },
        { ...emptyEnvRow(), name: '' }
      ]
    });
    expect(fieldLabel(field, f)).toBe(label);
  });
});

describe('formErrors', () => {
  it("adds the compile's field errors, in the order the panel shows the fields", () => {
    const compile = {
      ok: false,
      warnings: [],
      errors: [
        configError('requests.cpu', '4 is more than its limit 500m'),
        configError('parameters.epochs', 'expects an int'),
        configError('name', 'server says no'),
        { severity: 'error', message: 'cell 3: NameError', cell: 2 }
      ]
    } as Kale.ICompileResult;
    const typed = [
      { field: 'memoryLimit', message: '"abc" is not a quantity' },
      { field: 'name', message: 'not a job name' }
    ];
    expect(formErrors(typed, compile, jobForm())).toEqual([
      { field: 'name', message: 'not a job name' }, // the panel's own first
      { field: 'cpuRequest', message: '4 is more than its limit 500m' },
      { field: 'memoryLimit', message: '"abc" is not a quantity' },
      { field: 'parameters.epochs', message: 'expects an int' }
    ]);
    expect(generalErrors(compile, jobForm()).map(d => d.message)).toEqual([
      'cell 3: NameError'
    ]);
  });

  it('reads a message without its field', () => {
    expect(bareMessage(configError('nodes', 'must be at most 1000'))).toBe(
      'must be at most 1000'
    );
    expect(
      bareMessage({ severity: 'error', message: 'plain', cell: null })
    ).toBe('plain');
  });
});
