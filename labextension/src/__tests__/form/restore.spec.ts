import { emptyForm, IJobForm } from '../../form/model';
import {
  IPanelValues,
  fromStored,
  restoredFields,
  toStored
} from '../../form/restore';
import { emptySweep, ISweepForm } from '../../form/sweep';

function values(
  form: Partial<IJobForm> = {},
  sweep: Partial<ISweepForm> = {}
): IPanelValues {
  return {
    form: { ...emptyForm(), ...form },
    sweep: { ...emptySweep(), ...sweep }
  };
}

describe('fromStored', () => {
  it('reads back exactly what toStored kept, half-typed values included', () => {
    const kept = values(
      {
        name: 'my-run',
        nodes: '4x',
        volumes: ['pvc:data:/data=./data', ''],
        parameters: { epochs: '4' },
        storedParameters: { epochs: 4 },
        env: [{ name: 'A', source: 'value', value: '1', secret: '', key: '' }],
        packages: ['numpy'],
        pinPackages: 'off',
        gpuMode: 'mig',
        migProfile: 'mig-1g.5gb',
        extraOptions: { image: 'x:1' }
      },
      { params: { lr: '0.1, 0.01' }, parallel: '2', earlyStop: true }
    );
    const wire = JSON.parse(JSON.stringify(toStored(kept)));
    expect(wire.version).toBe(1);
    expect(fromStored(wire)).toEqual(kept);
  });

  it.each([
    ['nothing', null],
    ['another version', { version: 2, form: { name: 'x' } }],
    ['not an object', [1, 2]]
  ])('is null for %s', (_, value) => {
    expect(fromStored(value)).toBeNull();
  });

  it('reads a field of the wrong type as not chosen, keeping the others', () => {
    const read = fromStored({
      version: 1,
      form: {
        name: 7,
        nodes: '2',
        gpuMode: 'all',
        volumes: ['pvc:a:/a=./a', 3],
        env: [
          { name: 'A', source: 'elsewhere', value: '', secret: '', key: '' }
        ],
        packages: 'numpy',
        pinPackages: true,
        parameters: { lr: 0.1, epochs: '4' }
      },
      sweep: { earlyStop: 'yes', parallel: '3' }
    });
    expect(read?.form).toEqual({
      ...emptyForm(),
      nodes: '2',
      volumes: ['pvc:a:/a=./a'],
      parameters: { epochs: '4' }
    });
    expect(read?.sweep).toEqual({ ...emptySweep(), parallel: '3' });
  });
});

describe('restoredFields', () => {
  it("is empty when the restored values mean the notebook's", () => {
    expect(
      restoredFields(values({ name: 'a' }), values({ name: 'a ' }))
    ).toEqual([]);
  });

  it.each<[string, IPanelValues, IPanelValues, object[]]>([
    [
      'a job name lost at reload',
      values(),
      values({ name: 'my-run' }),
      [
        {
          label: 'job name',
          section: 'job',
          restored: 'my-run',
          notebook: 'none'
        }
      ]
    ],
    [
      'restarts kept at reload that the notebook has not saved',
      values(),
      values({ maxRestarts: '2' }),
      [
        {
          label: 'restarts',
          section: 'job',
          restored: '2',
          notebook: 'none'
        }
      ]
    ],
    [
      'a volume removed that the notebook still has',
      values({ volumes: ['pvc:data:/data=./data'] }),
      values({ volumes: [] }),
      [
        {
          label: 'volumes',
          section: 'storage',
          restored: 'none',
          notebook: 'pvc:data:/data=./data'
        }
      ]
    ],
    [
      'a parameter override and sweep values',
      values({ parameters: { epochs: '6' } }, { params: { lr: '0.1' } }),
      values(
        { parameters: { epochs: '4' } },
        { params: { lr: '0.1, 0.01' }, parallel: '2' }
      ),
      [
        {
          label: 'parameter epochs',
          section: 'parameters',
          restored: '4',
          notebook: '6'
        },
        {
          label: 'sweep of lr',
          section: 'parameters',
          restored: '0.1, 0.01',
          notebook: '0.1'
        },
        {
          label: 'trials at a time',
          section: 'parameters',
          restored: '2',
          notebook: '1'
        }
      ]
    ],
    [
      'packages chosen where the notebook lets compile detect them',
      values(),
      values({ packages: ['numpy==2.0'] }),
      [
        {
          label: 'packages',
          section: 'packages',
          restored: 'numpy==2.0',
          notebook: '(as detected)'
        }
      ]
    ],
    [
      "pinning chosen where the notebook leaves it to the backend's default",
      values(),
      values({ pinPackages: 'off' }),
      [
        {
          label: 'pin package versions',
          section: 'packages',
          restored: 'off',
          notebook: "(the backend's default)"
        }
      ]
    ],
    [
      'GPUs, CPU and an env variable',
      values({ gpuMode: 'count', gpuCount: '1' }),
      values({
        cpuLimit: '2',
        env: [{ name: 'T', source: 'secret', value: '', secret: 's', key: 'k' }]
      }),
      [
        {
          label: 'GPUs',
          section: 'resources',
          restored: 'none',
          notebook: '1'
        },
        {
          label: 'CPU limit',
          section: 'resources',
          restored: '2',
          notebook: 'none'
        },
        {
          label: 'environment variables',
          section: 'env',
          restored: 'T from s/k',
          notebook: 'none'
        }
      ]
    ]
  ])('names %s, with both values and its section', (_, disk, kept, fields) => {
    expect(restoredFields(disk, kept)).toEqual(fields);
  });

  it('leaves out rows that send nothing (an empty volume or variable)', () => {
    const disk = values({ volumes: ['pvc:d:/d=./d'] });
    const kept = values({
      volumes: ['pvc:d:/d=./d', ' '],
      env: [{ name: '', source: 'value', value: 'x', secret: '', key: '' }]
    });
    expect(restoredFields(disk, kept)).toEqual([]);
  });

  it('leaves out the sweep settings while nothing is swept', () => {
    expect(restoredFields(values(), values({}, { parallel: '4' }))).toEqual([]);
  });
});
