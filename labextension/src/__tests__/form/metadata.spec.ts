import { fromMetadata, sameForm, toMetadata } from '../../form/metadata';
import { emptyEnvRow, emptyForm } from '../../form/model';
import { jobForm } from '../helpers';

describe('notebook metadata: metadata.kale_ext = {options, config}', () => {
  const full = jobForm({
    runtime: 'torch-distributed',
    name: 'digits',
    nodes: '2',
    procsPerNode: '1',
    trainCall: '2',
    maxRestarts: '2',
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
    expect(toMetadata(full)).toEqual({
      options: {
        image: 'repo/img:1',
        name: 'digits',
        runtime: 'torch-distributed',
        nodes: 2,
        procs_per_node: 1,
        train_call: 2,
        max_restarts: 2,
        gpu: 'mig-1g.5gb',
        // as typed: the server types them by the notebook's parameters cell
        parameters: { epochs: '1', optimizer: 'adam' },
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
    const meta = toMetadata(full);
    const back = fromMetadata(JSON.parse(JSON.stringify(meta)));
    expect(toMetadata(back)).toEqual(meta);
    expect(back.nodes).toBe('2');
    expect(back.maxRestarts).toBe('2');
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

  it.each([
    [true, 'on'],
    [false, 'off']
  ] as const)(
    'reads pin_packages %s as the pinning field, not as an option kept aside',
    (pin_packages, pinPackages) => {
      const back = fromMetadata({ options: { pin_packages }, config: {} });
      expect(back.pinPackages).toBe(pinPackages);
      expect(back.extraOptions).toEqual({});
      expect(toMetadata(back).options).toEqual({ pin_packages });
    }
  );

  it('keeps the Storage fields: volumes, shm size and outputs volume', () => {
    const storage = jobForm({
      volumes: ['pvc:data:/data:ro', 'emptydir:/scratch:1Gi'],
      shmSize: '2Gi',
      outputs: 'pvc:results'
    });
    const meta = toMetadata(storage);
    expect(meta.options).toEqual({
      volumes: ['pvc:data:/data:ro', 'emptydir:/scratch:1Gi'],
      shm_size: '2Gi',
      outputs: 'pvc:results'
    });
    const back = fromMetadata(JSON.parse(JSON.stringify(meta)));
    expect(back.volumes).toEqual(storage.volumes);
    expect(back.shmSize).toBe('2Gi');
    expect(back.outputs).toBe('pvc:results');
    expect(back.extraOptions).toEqual({});
    expect(sameForm(back, storage)).toBe(true);
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
