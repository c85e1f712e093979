import contract from '../../contract.json';
import { IJobForm, emptyEnvRow, emptyForm } from '../../form/model';
import type { Kale } from '../../types';
import { nameLimit, suggestName, validateForm } from '../../form/validation';

function errors(change: Partial<IJobForm>, context = {}): [string, string][] {
  return validateForm({ ...emptyForm(), ...change }, context).map(e => [
    e.field,
    e.message
  ]);
}

const runtime: Kale.IRuntime = {
  name: 'torch-distributed',
  framework: 'torch',
  kind: 'ClusterTrainingRuntime',
  image: 'local',
  num_nodes: 1,
  accelerators: {},
  initializers: []
};

describe('validateForm', () => {
  it('accepts an empty form (everything defaults)', () => {
    expect(errors({})).toEqual([]);
  });

  it('checks the Storage fields, and a local folder on the Local backend', () => {
    const storage = { volumes: ['pvc:data:/data'], shmSize: 'big' };
    expect(errors(storage)).toEqual([
      ['shmSize', '"big" is not a size (e.g. 2Gi)']
    ]);
    expect(errors(storage, { local: true }).map(e => e[0])).toEqual([
      'shmSize',
      'volumes.0'
    ]);
  });

  type Case = [string, Partial<IJobForm>, string, RegExp];
  const cases: Case[] = [
    ['a name with capitals', { name: 'Train' }, 'name', /lowercase/],
    ['a name ending in -', { name: 'train-' }, 'name', /ending with/],
    ['a name too long', { name: 'a'.repeat(49) }, 'name', /at most 48/],
    ['0 nodes', { nodes: '0' }, 'nodes', /at least 1/],
    ['1001 nodes', { nodes: '1001' }, 'nodes', /at most 1000/],
    ['257 processes', { procsPerNode: '257' }, 'procsPerNode', /at most 256/],
    ['a fraction of a node', { nodes: '1.5' }, 'nodes', /whole number/],
    ['0 processes', { procsPerNode: '0' }, 'procsPerNode', /at least 1/],
    ['no GPU count', { gpuMode: 'count' }, 'gpuCount', /number of GPUs/],
    [
      'a bad GPU count',
      { gpuMode: 'count', gpuCount: 'two' },
      'gpuCount',
      /whole/
    ],
    [
      'a bad MIG profile',
      { gpuMode: 'mig', migProfile: '1g.5gb' },
      'migProfile',
      /mig-1g/
    ],
    ['a bad CPU', { cpuRequest: '1 core' }, 'cpuRequest', /not a quantity/],
    ['a bad memory', { memoryLimit: '4GB' }, 'memoryLimit', /not a quantity/],
    [
      'a request above its limit',
      { cpuRequest: '2', cpuLimit: '500m' },
      'cpuRequest',
      /more than its limit 500m/
    ],
    [
      'memory above its limit',
      { memoryRequest: '2Gi', memoryLimit: '1G' },
      'memoryRequest',
      /more than/
    ],
    [
      'an env name with a dash',
      { env: [{ ...emptyEnvRow(), name: 'MY-VAR' }] },
      'env.0.name',
      /not a variable name/
    ],
    [
      'an empty env name',
      { env: [{ ...emptyEnvRow(), value: 'x' }] },
      'env.0.name',
      /enter a name/
    ],
    [
      'a Trainer variable',
      { env: [{ ...emptyEnvRow(), name: 'PET_NNODES' }] },
      'env.0.name',
      /set by the Trainer/
    ],
    [
      'a variable set twice',
      {
        env: [
          { ...emptyEnvRow(), name: 'A' },
          { ...emptyEnvRow(), name: 'A' }
        ]
      },
      'env.1.name',
      /set twice/
    ],
    [
      'a Secret without a name',
      { env: [{ ...emptyEnvRow(), name: 'T', source: 'secret', key: 'k' }] },
      'env.0.secret',
      /name of a Secret/
    ],
    [
      'a Secret without a key',
      { env: [{ ...emptyEnvRow(), name: 'T', source: 'secret', secret: 's' }] },
      'env.0.key',
      /key of the Secret/
    ],
    [
      'a train() call kept in the metadata that is no call number',
      { trainCall: '0' },
      'trainCall',
      /at least 1/
    ],
    [
      'more restarts than the bound kept beside the option',
      { maxRestarts: '21' },
      'maxRestarts',
      /at most 20, not 21/
    ],
    [
      'a bad package',
      { packages: ['numpy', '==1.0'] },
      'packages.1',
      /not a requirement/
    ]
  ];
  it.each(cases)('reports %s', (_, change, field, message) => {
    const found = errors(change, { runtime });
    expect(found.map(([f]) => f)).toContain(field);
    expect(found.find(([f]) => f === field)![1]).toMatch(message);
  });

  it.each([
    { name: 'digits-ddp-2' },
    { nodes: '16', procsPerNode: '8' },
    { gpuMode: 'count', gpuCount: '0' },
    { gpuMode: 'mig', migProfile: 'mig-3g.20gb' },
    {
      cpuRequest: '500m',
      cpuLimit: '0.5',
      memoryRequest: '512Mi',
      memoryLimit: '1e9'
    },
    { packages: ['torch==2.13.0', 'scikit-learn>=1.5', 'pkg[extra]~=1.0', ''] },
    {
      env: [
        {
          ...emptyEnvRow(),
          name: 'HF_TOKEN',
          source: 'secret',
          secret: 'hf.tokens',
          key: 'token'
        }
      ]
    }
  ] as Partial<IJobForm>[])('accepts %j', change => {
    expect(errors(change, { runtime })).toEqual([]);
  });

  it('leaves parameters to the server (it types them by the notebook)', () => {
    const context = { parameters: { epochs: 6 } };
    expect(
      errors({ parameters: { epochs: 'abc', gone: '1' } }, context)
    ).toEqual([]);
  });

  it('suggests a valid name for an invalid one', () => {
    expect(errors({ name: 'MyTrainingJob' }, { runtime })).toEqual([
      ['name', expect.stringMatching(/: try mytrainingjob$/)]
    ]);
    expect(errors({ name: 'a'.repeat(50) }, { runtime })).toEqual([
      [
        'name',
        `50 characters; this runtime allows at most 48: try ${'a'.repeat(48)}`
      ]
    ]);
  });
});

describe('the checks agree with the contract the server generated', () => {
  const patterns = contract.k8s.patterns;

  it.each(['digits-ddp', 'MyTrainingJob', 'a-', '1job', 'job.one', 'x'])(
    'marks the job name %j as the job_name pattern does',
    name => {
      const allowed = new RegExp(patterns.job_name.pattern).test(name);
      const found = errors({ name }, { runtime }).map(([f]) => f);
      expect(found.includes('name')).toBe(!allowed);
    }
  );

  it.each(['HF_TOKEN', '_x', '9LIVES', 'MY-VAR', 'a.b'])(
    'marks the variable %j as the env_name pattern does',
    name => {
      const allowed = new RegExp(patterns.env_name.pattern).test(name);
      const found = errors({ env: [{ ...emptyEnvRow(), name }] });
      expect(found.length === 0).toBe(allowed);
    }
  );

  it('refuses every variable the Trainer reserves', () => {
    for (const name of contract.k8s.reserved_env) {
      expect(errors({ env: [{ ...emptyEnvRow(), name }] })).toEqual([
        ['env.0.name', `${name} is set by the Trainer on each node`]
      ]);
    }
  });

  it('bounds nodes by the nodes option, naming the bound', () => {
    const { maximum } = contract.options.nodes;
    expect(errors({ nodes: String(maximum) })).toEqual([]);
    expect(errors({ nodes: String(maximum + 1) })).toEqual([
      ['nodes', `must be at most ${maximum}, not ${maximum + 1}`]
    ]);
  });

  it('bounds the packages by the packages option', () => {
    const { maximum } = contract.options.packages;
    const many = Array.from({ length: maximum + 1 }, (_, i) => `p${i}`);
    expect(errors({ packages: many })).toEqual([
      ['packages', `at most ${maximum} packages`]
    ]);
  });
});

describe('nameLimit', () => {
  it('leaves room for the pod names', () => {
    expect(nameLimit(runtime, 1)).toBe(48);
    expect(nameLimit(runtime, 11)).toBe(47);
    expect(
      nameLimit({ ...runtime, initializers: ['dataset-initializer'] }, 1)
    ).toBe(33);
    expect(nameLimit(undefined)).toBe(48);
  });
});

describe('suggestName', () => {
  it.each([
    ['MyTrainingJob', 48, 'mytrainingjob'],
    ['My Training Job!', 48, 'my-training-job'],
    ['2nd_try', 48, 'nd-try'],
    ['abcdef', 3, 'abc'],
    ['---', 48, '']
  ])('%j (limit %d) → %j', (text, limit, name) => {
    expect(suggestName(text, limit)).toBe(name);
  });
});
