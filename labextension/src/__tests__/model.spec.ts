import {
  IJobForm,
  emptyEnvRow,
  emptyForm,
  fromMetadata,
  jobRequest,
  parseCount,
  parseParameter,
  sameForm,
  toMetadata,
  toOptions
} from '../model';

function form(change: Partial<IJobForm> = {}): IJobForm {
  return { ...emptyForm(), ...change };
}

describe('parseParameter', () => {
  const cases: [string, string, unknown, unknown][] = [
    // [what, text, default, expected value or Error message part]
    ['an int', '3', 6, 3],
    ['a float for an int', '0.5', 6, 0.5],
    ['a float', '1e-3', 0.05, 0.001],
    ['JSON true', 'true', false, true],
    ["Python's True", 'True', false, true],
    ["Python's None", 'None', null, null],
    ['a list', '[1, 2]', [3], [1, 2]],
    ['an object', '{"a": 1}', { b: 2 }, { a: 1 }],
    ['a string as typed', 'adam', 'sgd', 'adam'],
    ['a string that looks like a number', '12', 'sgd', '12'],
    ['a quoted JSON string', '"a b"', 'sgd', 'a b'],
    ['anything for a null default', '"x"', null, 'x'],
    ['text with no default known', 'hello', undefined, 'hello'],
    ['JSON with no default known', '7', undefined, 7]
  ];
  it.each(cases)('reads %s', (_, text, defaultValue, expected) => {
    expect(parseParameter(text, defaultValue as never)).toEqual({
      ok: true,
      value: expected
    });
  });

  const errors: [string, string, unknown, string][] = [
    ['text for a number', 'abc', 6, 'is not a value'],
    ['a string for a number', '"3"', 6, 'must be a number'],
    ['a number for a bool', '1', true, 'must be a boolean'],
    ['an object for a list', '{}', [1], 'must be a list'],
    ['a list for an object', '[]', { a: 1 }, 'must be an object']
  ];
  it.each(errors)('rejects %s', (_, text, defaultValue, message) => {
    const parsed = parseParameter(text, defaultValue as never);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.error).toContain(message);
  });
});

describe('parseCount', () => {
  it.each([
    ['', 1, { ok: true, value: undefined }],
    [' 4 ', 1, { ok: true, value: 4 }],
    ['0', 0, { ok: true, value: 0 }],
    ['0', 1, { ok: false, error: 'must be at least 1' }],
    ['1.5', 1, { ok: false, error: 'must be a whole number, not "1.5"' }],
    ['-2', 0, { ok: false, error: 'must be a whole number, not "-2"' }]
  ])('%j (minimum %d)', (text, minimum, expected) => {
    expect(parseCount(text, minimum)).toEqual(expected);
  });
});

describe('toOptions: the form as JobOptions', () => {
  it('sends nothing for an empty form', () => {
    expect(toOptions(emptyForm())).toEqual({});
  });

  it('sends what was chosen, as numbers', () => {
    expect(
      toOptions(
        form({
          runtime: 'torch-distributed',
          name: ' train-1 ',
          nodes: '2',
          procsPerNode: '4'
        })
      )
    ).toEqual({
      runtime: 'torch-distributed',
      name: 'train-1',
      nodes: 2,
      procs_per_node: 4
    });
  });

  it.each([
    ['none', '', '', undefined],
    ['count', '2', '', 2],
    ['count', '0', '', 0],
    ['mig', '', 'MIG-1g.5gb', 'mig-1g.5gb'],
    ['mig', '', 'mig-big', undefined],
    ['count', 'x', '', undefined]
  ] as const)('gpu %s %j %j → %j', (gpuMode, gpuCount, migProfile, gpu) => {
    expect(toOptions(form({ gpuMode, gpuCount, migProfile })).gpu).toBe(gpu);
  });

  it('puts per-node CPU and memory in config requests and limits', () => {
    const options = toOptions(
      form({
        cpuRequest: '500m',
        cpuLimit: '2',
        memoryRequest: '1Gi',
        memoryLimit: '4Gi'
      })
    );
    expect(options.config).toEqual({
      requests: { cpu: '500m', memory: '1Gi' },
      limits: { cpu: '2', memory: '4Gi' }
    });
    expect(options.cpu).toBeUndefined();
  });

  it('leaves out values that do not parse (validation reports them)', () => {
    expect(
      toOptions(form({ nodes: 'two', cpuLimit: 'lots', gpuMode: 'count' }))
    ).toEqual({});
  });

  it('sends env values and Secret keys as config.env (valueFrom.secretKeyRef)', () => {
    const options = toOptions(
      form({
        env: [
          { ...emptyEnvRow(), name: 'MODE', value: 'fast' },
          {
            ...emptyEnvRow(),
            name: 'TOKEN',
            source: 'secret',
            secret: 'hf-token',
            key: 'token'
          },
          emptyEnvRow() // an empty row is not sent
        ]
      })
    );
    expect(options.config).toEqual({
      env: [
        { name: 'MODE', value: 'fast' },
        {
          name: 'TOKEN',
          valueFrom: { secretKeyRef: { name: 'hf-token', key: 'token' } }
        }
      ]
    });
    expect(options.env).toBeUndefined();
  });

  it('sends the changed parameters, typed by their defaults', () => {
    const options = toOptions(
      form({ parameters: { epochs: '1', optimizer: 'adam', lr: 'oops' } }),
      { parameters: { epochs: 6, optimizer: 'sgd', lr: 0.05 } }
    );
    expect(options.parameters).toEqual({ epochs: 1, optimizer: 'adam' });
  });

  it('sends the packages only once edited', () => {
    expect(toOptions(form()).packages).toBeUndefined();
    expect(
      toOptions(form({ packages: ['torch==2.13.0', ' ', ' numpy '] })).packages
    ).toEqual(['torch==2.13.0', 'numpy']);
    expect(toOptions(form({ packages: [] })).packages).toEqual([]);
  });

  it('keeps the options and config it does not edit', () => {
    const options = toOptions(
      form({
        extraOptions: { image: 'repo/img:1', dataset_uri: 'hf://d' },
        extraConfig: {
          labels: { team: 'ml' },
          requests: { 'nvidia.com/gpu': '1' },
          env: [
            {
              name: 'POD',
              valueFrom: { fieldRef: { fieldPath: 'metadata.name' } }
            }
          ]
        },
        cpuRequest: '1',
        env: [{ ...emptyEnvRow(), name: 'A', value: '1' }]
      })
    );
    expect(options).toEqual({
      image: 'repo/img:1',
      dataset_uri: 'hf://d',
      config: {
        labels: { team: 'ml' },
        requests: { 'nvidia.com/gpu': '1', cpu: '1' },
        env: [
          { name: 'A', value: '1' },
          {
            name: 'POD',
            valueFrom: { fieldRef: { fieldPath: 'metadata.name' } }
          }
        ]
      }
    });
  });
});

describe('jobRequest: the body of POST compile and POST jobs', () => {
  it('sends a path or the notebook JSON, with the options', () => {
    const f = form({ nodes: '2' });
    expect(jobRequest({ path: 'dir/nb.ipynb' }, f)).toEqual({
      path: 'dir/nb.ipynb',
      options: { nodes: 2 }
    });
    const notebook = {
      cells: [],
      metadata: {},
      nbformat: 4,
      nbformat_minor: 5
    };
    expect(jobRequest({ notebook }, f)).toEqual({
      notebook,
      options: { nodes: 2 }
    });
  });
});

describe('notebook metadata: metadata.kale_ext = {options, config}', () => {
  const full = form({
    runtime: 'torch-distributed',
    name: 'digits',
    nodes: '2',
    procsPerNode: '1',
    gpuMode: 'mig',
    migProfile: 'mig-1g.5gb',
    cpuRequest: '500m',
    cpuLimit: '2',
    memoryRequest: '1Gi',
    memoryLimit: '4Gi',
    env: [
      { ...emptyEnvRow(), name: 'MODE', value: 'fast' },
      {
        ...emptyEnvRow(),
        name: 'TOKEN',
        source: 'secret',
        secret: 's',
        key: 'k'
      }
    ],
    packages: ['numpy==2.1.0'],
    parameters: { epochs: '1', optimizer: 'adam' },
    extraOptions: { image: 'repo/img:1' },
    extraConfig: { labels: { team: 'ml' }, limits: { 'nvidia.com/gpu': '1' } }
  });

  it('writes the options without their config, and the config', () => {
    expect(
      toMetadata(full, { parameters: { epochs: 6, optimizer: 'sgd' } })
    ).toEqual({
      options: {
        image: 'repo/img:1',
        name: 'digits',
        runtime: 'torch-distributed',
        nodes: 2,
        procs_per_node: 1,
        gpu: 'mig-1g.5gb',
        parameters: { epochs: 1, optimizer: 'adam' },
        packages: ['numpy==2.1.0']
      },
      config: {
        labels: { team: 'ml' },
        requests: { cpu: '500m', memory: '1Gi' },
        limits: { 'nvidia.com/gpu': '1', cpu: '2', memory: '4Gi' },
        env: [
          { name: 'MODE', value: 'fast' },
          {
            name: 'TOKEN',
            valueFrom: { secretKeyRef: { name: 's', key: 'k' } }
          }
        ]
      }
    });
  });

  it('round-trips: the form read back writes the same metadata', () => {
    const context = { parameters: { epochs: 6, optimizer: 'sgd' } };
    const meta = toMetadata(full, context);
    const back = fromMetadata(JSON.parse(JSON.stringify(meta)));
    expect(toMetadata(back, context)).toEqual(meta);
    expect(back.nodes).toBe('2');
    expect(back.gpuMode).toBe('mig');
    expect(back.cpuRequest).toBe('500m');
    expect(back.memoryLimit).toBe('4Gi');
    expect(back.env).toEqual(full.env);
    expect(back.parameters).toEqual({ epochs: '1', optimizer: 'adam' });
    expect(back.extraOptions).toEqual({ image: 'repo/img:1' });
    expect(back.extraConfig).toEqual({
      labels: { team: 'ml' },
      limits: { 'nvidia.com/gpu': '1' }
    });
    expect(sameForm(back, full)).toBe(true);
  });

  it('reads what other surfaces write (the CLI, a hand edit)', () => {
    const f = fromMetadata({
      options: { gpu: 2, cpu: 4, memory: '8Gi', env: { A: '1', B: 2 } },
      config: {
        env: [
          { name: 'B', value: 'from config' },
          { name: 'D', value: 'from config' },
          { name: 'C', valueFrom: { configMapKeyRef: { name: 'm', key: 'k' } } }
        ],
        tolerations: [{ key: 'gpu', operator: 'Exists' }]
      }
    });
    expect(f.gpuMode).toBe('count');
    expect(f.gpuCount).toBe('2');
    expect([f.cpuRequest, f.cpuLimit, f.memoryRequest, f.memoryLimit]).toEqual([
      '4',
      '4',
      '8Gi',
      '8Gi'
    ]);
    // The env option wins over the config's, as on the server.
    expect(f.env.map(r => [r.name, r.value])).toEqual([
      ['B', '2'],
      ['D', 'from config'],
      ['A', '1']
    ]);
    // What the panel does not edit is kept as it is.
    expect(f.extraConfig).toEqual({
      env: [
        { name: 'C', valueFrom: { configMapKeyRef: { name: 'm', key: 'k' } } }
      ],
      tolerations: [{ key: 'gpu', operator: 'Exists' }]
    });
  });

  it.each([undefined, null, 'text', [], { options: 'x', config: 3 }])(
    'reads %j as an empty form',
    value => {
      expect(fromMetadata(value)).toEqual(emptyForm());
    }
  );

  it('does not modify the metadata it reads', () => {
    const meta = {
      options: { nodes: 2 },
      config: { requests: { cpu: '1', x: '2' } }
    };
    const copy = JSON.parse(JSON.stringify(meta));
    fromMetadata(meta);
    expect(meta).toEqual(copy);
  });
});
