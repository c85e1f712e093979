import contract from '../../contract.json';
import {
  IStorageFields,
  parseOutputs,
  parseVolume,
  sentVolumes,
  storageErrors
} from '../../form/volumes';

/**
 * The Storage fields read as `kale_ext/job/volumes.py` and `outputs.py`
 * read them, with the kinds and reserved paths of the generated contract.
 */

describe('parseVolume', () => {
  type Good = [string, Record<string, unknown>];
  const good: Good[] = [
    [
      'pvc:data:/data',
      { kind: 'pvc', name: 'data', mount: '/data', readOnly: false }
    ],
    ['pvc:data:/data:ro', { kind: 'pvc', readOnly: true }],
    ['PVC:data:/data/', { kind: 'pvc', mount: '/data' }],
    ['secret:creds:/etc/creds', { kind: 'secret', name: 'creds' }],
    ['configmap:cfg.v1:conf', { kind: 'configmap', mount: 'conf' }],
    ['emptydir:/scratch', { kind: 'emptydir', name: null, size: null }],
    ['emptydir:/scratch:1Gi', { kind: 'emptydir', size: '1Gi' }],
    ['pvc:data:/data=./data', { local: './data' }],
    ['pvc:data:data:ro=/tmp/x', { mount: 'data', local: '/tmp/x' }]
  ];
  it.each(good)('reads %s', (text, expected) => {
    const parsed = parseVolume(text);
    expect(parsed).toEqual({
      ok: true,
      value: expect.objectContaining(expected)
    });
  });

  type Bad = [string, RegExp];
  const bad: Bad[] = [
    ['', /enter a volume: pvc:NAME:\/mount\[:ro\]/],
    ['nfs:server:/data', /"nfs" is not a volume kind: write pvc:NAME/],
    ['pvc:data', /write pvc:NAME:\/mount\[:ro\]/],
    ['secret:creds:/etc:ro', /write secret:NAME:\/mount/],
    ['pvc:data:/data:rw', /write pvc:NAME:\/mount\[:ro\]/],
    ['pvc:Data:/data', /"Data" is not a Kubernetes object name/],
    ['pvc:data:/', /"\/" is not a folder to mount/],
    ['pvc:data:../up', /"..\/up" is not a folder to mount/],
    ['pvc:data:', /give the folder to mount it at/],
    ['emptydir:/s:lots', /"lots" is not a size/],
    ['emptydir:/s=./x', /scratch folder: it takes no =LOCAL_DIR/],
    ['emptydir', /write emptydir:\/mount\[:SIZE\]/],
    ['pvc:data:/data=', /give the local folder/]
  ];
  it.each(bad)('refuses %j, saying what is wrong', (text, message) => {
    const parsed = parseVolume(text);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.error).toMatch(message);
  });

  it('knows the kinds the server knows', () => {
    for (const kind of contract.volumes.kinds) {
      const text = kind === 'emptydir' ? 'emptydir:/x' : `${kind}:name:/x`;
      expect(parseVolume(text).ok).toBe(true);
    }
  });
});

describe('parseOutputs', () => {
  it.each([
    ['', undefined],
    [
      'pvc:results',
      { claim: 'results', mount: contract.volumes.outputs_mount }
    ],
    ['pvc:results:/out/', { claim: 'results', mount: '/out' }]
  ])('reads %j', (text, value) => {
    expect(parseOutputs(text)).toEqual({ ok: true, value });
  });

  it.each([
    ['results', /not pvc:NAME or pvc:NAME:\/mount/],
    ['pvc:Results', /"Results" is not a PersistentVolumeClaim name/],
    ['pvc:r:/', /"\/" is not a folder/],
    ['pvc:r:relative', /not pvc:NAME/]
  ])('refuses %j', (text, message) => {
    const parsed = parseOutputs(text);
    expect(parsed.ok ? '' : parsed.error).toMatch(message);
  });
});

describe('storageErrors', () => {
  const fields = (change: Partial<IStorageFields>): IStorageFields => ({
    volumes: [],
    shmSize: '',
    outputs: '',
    ...change
  });
  const errors = (change: Partial<IStorageFields>, local = false) =>
    storageErrors(fields(change), local).map(e => [e.field, e.message]);

  it('accepts nothing chosen, and good volumes', () => {
    expect(errors({})).toEqual([]);
    expect(
      errors({
        volumes: ['pvc:data:/data:ro', 'emptydir:scratch:1Gi'],
        shmSize: '2Gi',
        outputs: 'pvc:results'
      })
    ).toEqual([]);
  });

  type Case = [string, Partial<IStorageFields>, string, RegExp];
  const cases: Case[] = [
    [
      'two mounts at one path',
      { volumes: ['pvc:a:/data', 'pvc:b:/data/'] },
      'volumes.1',
      /\/data is volume 1 \(\/data\)/
    ],
    [
      'a mount inside another',
      { volumes: ['pvc:a:/data', 'emptydir:/data/tmp'] },
      'volumes.1',
      /\/data\/tmp collides with volume 1/
    ],
    [
      'a mount on /dev/shm with a shm size',
      { volumes: ['emptydir:/dev/shm'], shmSize: '1Gi' },
      'volumes.0',
      /\/dev\/shm is \/dev\/shm \(shm size 1Gi\)/
    ],
    [
      'a mount on the outputs volume',
      { volumes: ['pvc:a:/mnt/outputs/x'], outputs: 'pvc:results' },
      'volumes.0',
      /collides with the outputs volume/
    ],
    [
      'a mount on the working directory',
      { volumes: [`pvc:a:${contract.volumes.workdir}/data`] },
      'volumes.0',
      /working directory on a cluster: mount relatively/
    ],
    ['a bad shm size', { shmSize: '2 GB' }, 'shmSize', /"2 GB" is not a size/],
    ['a bad outputs volume', { outputs: 'data' }, 'outputs', /not pvc:NAME/]
  ];
  it.each(cases)('names %s', (_, change, field, message) => {
    expect(errors(change)).toEqual([[field, expect.stringMatching(message)]]);
  });

  it('asks for the local folder of a pvc, secret or configmap on Local', () => {
    const volumes = ['pvc:data:/data', 'secret:s:/s=./s', 'emptydir:/tmp/x'];
    expect(errors({ volumes }, true)).toEqual([
      [
        'volumes.0',
        expect.stringMatching(
          /exists only on a cluster: add =DIR.*pvc:data:\/data=\.\/data/
        )
      ]
    ]);
    expect(errors({ volumes }, false)).toEqual([]);
  });
});

describe('sentVolumes', () => {
  it('sends the volumes that read, with their rows', () => {
    expect(sentVolumes(['pvc:a:/a', 'nope', '', ' emptydir:/t '])).toEqual([
      { index: 0, text: 'pvc:a:/a' },
      { index: 3, text: 'emptydir:/t' }
    ]);
  });
});
