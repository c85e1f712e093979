import { emptyEnvRow, jobRequest, toOptions } from '../../form/model';
import { jobForm } from '../helpers';

describe('toOptions: the form as JobOptions', () => {
  it.each([
    ['', undefined],
    ['on', true],
    ['off', false]
  ] as const)('sends pin_packages %s as %s', (pinPackages, sent) => {
    expect(toOptions(jobForm({ pinPackages })).pin_packages).toBe(sent);
  });

  it('sends nothing for an empty form', () => {
    expect(toOptions(jobForm())).toEqual({});
  });

  it('sends what was chosen, as numbers', () => {
    expect(
      toOptions(
        jobForm({
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
    expect(toOptions(jobForm({ gpuMode, gpuCount, migProfile })).gpu).toBe(gpu);
  });

  it('puts per-node CPU and memory in config requests and limits', () => {
    const options = toOptions(
      jobForm({
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
      toOptions(jobForm({ nodes: 'two', cpuLimit: 'lots', gpuMode: 'count' }))
    ).toEqual({});
  });

  it('sends env values and Secret keys as config.env (valueFrom.secretKeyRef)', () => {
    const options = toOptions(
      jobForm({
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

  it('sends the changed parameters as typed (the server types them)', () => {
    const options = toOptions(
      jobForm({ parameters: { epochs: '1', debug: 'False', lr: '1e-3' } })
    );
    expect(options.parameters).toEqual({
      epochs: '1',
      debug: 'False',
      lr: '1e-3'
    });
    expect(toOptions(jobForm()).parameters).toBeUndefined();
  });

  it("sends no value for an emptied parameter: the notebook's default is used", () => {
    const options = toOptions(
      jobForm({ parameters: { epochs: '', lr: '  ', batch: '64' } })
    );
    expect(options.parameters).toEqual({ batch: '64' });
    expect(
      toOptions(jobForm({ parameters: { epochs: '' } })).parameters
    ).toBeUndefined();
  });

  it('sends the values the metadata held as they were, until edited', () => {
    const stored = { lr: 0.5, debug: false };
    const f = jobForm({
      parameters: { lr: '0.5', debug: 'True' },
      storedParameters: stored
    });
    expect(toOptions(f).parameters).toEqual({ lr: 0.5, debug: 'True' });
  });

  it('sends the packages only once edited', () => {
    expect(toOptions(jobForm()).packages).toBeUndefined();
    expect(
      toOptions(jobForm({ packages: ['torch==2.13.0', ' ', ' numpy '] }))
        .packages
    ).toEqual(['torch==2.13.0', 'numpy']);
    expect(toOptions(jobForm({ packages: [] })).packages).toEqual([]);
  });

  it('sends the volumes, shm size and outputs that read (validation names the rest)', () => {
    const options = toOptions(
      jobForm({
        volumes: [' pvc:data:/data ', 'nope', ''],
        shmSize: '2Gi',
        outputs: 'pvc:results'
      })
    );
    expect(options.volumes).toEqual(['pvc:data:/data']);
    expect(options.shm_size).toBe('2Gi');
    expect(options.outputs).toBe('pvc:results');
    const bad = toOptions(
      jobForm({ volumes: ['nope'], shmSize: 'x', outputs: 'y' })
    );
    expect([bad.volumes, bad.shm_size, bad.outputs]).toEqual([
      undefined,
      undefined,
      undefined
    ]);
  });

  it('keeps the options and config it does not edit', () => {
    const options = toOptions(
      jobForm({
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
    const f = jobForm({ nodes: '2' });
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
