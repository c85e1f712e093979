import { KaleAPIError, KaleService } from '../api';
import type { Kale } from '../types';
import { BASE, fakeServer, json, SETTINGS } from './helpers';

const DEFAULTS: Kale.IDefaults = {
  defaults: {
    backend: 'auto',
    namespace: null,
    runtime: 'torch-distributed',
    image: null,
    pip_index_urls: [],
    nodes: 2,
    cpu: null,
    memory: '6Gi',
    gpu: null
  },
  sources: {
    backend: 'built in',
    namespace: 'built in',
    runtime: 'built in',
    image: 'built in',
    pip_index_urls: 'built in',
    nodes: 'JupyterLab settings',
    cpu: 'built in',
    memory: 'JupyterLab settings',
    gpu: 'built in'
  }
};

describe('KaleService', () => {
  const service = new KaleService(SETTINGS);
  const server = fakeServer();
  const { respond, call } = server;

  it.each([
    [
      'getBackend',
      'backend',
      [],
      { name: 'local', reason: 'r', namespace: null },
      null
    ],
    ['listTags', 'tags', [], { tags: [{ tag: 'skip' }] }, [{ tag: 'skip' }]],
    ['getDefaults', 'defaults', [], DEFAULTS, null],
    [
      'listRuntimes',
      'runtimes',
      [],
      { runtimes: [{ name: 'r' }] },
      [{ name: 'r' }]
    ],
    [
      'listQueues',
      'queues',
      [],
      { queues: [{ name: 'team-a' }], reason: null },
      null
    ],
    [
      'getRuntime',
      'runtimes/torch%20distributed',
      ['torch distributed'],
      { name: 'x' },
      null
    ],
    [
      'getRuntimePackages',
      'runtimes/torch%20distributed/packages',
      ['torch distributed'],
      { runtime: 'torch distributed', packages: null, source: null },
      null
    ],
    ['listJobs', 'jobs', [], { jobs: [{ name: 'a' }] }, [{ name: 'a' }]],
    ['getJob', 'jobs/train-1', ['train-1'], { name: 'train-1' }, null],
    [
      'listEvents',
      'jobs/train-1/events',
      ['train-1'],
      { events: [{ reason: 'x' }] },
      [{ reason: 'x' }]
    ]
  ] as [keyof KaleService, string, string[], unknown, unknown][])(
    '%s GETs %s',
    async (method, path, args, body, expected) => {
      respond(json(body));
      const fn = service[method] as (...a: string[]) => Promise<unknown>;
      const result = await fn.apply(service, args);
      expect(result).toEqual(expected ?? body);
      expect(call().url).toBe(`${BASE}/${path}`);
      expect(call().init.method).toBeUndefined();
      // Never JupyterLab's `no-store`: it adds a `?<timestamp>` parameter.
      expect(call().init.cache).toBe('no-cache');
    }
  );

  it('POSTs compile with the body as JSON', async () => {
    const result = { ok: false, errors: [], warnings: [] };
    respond(json(result));
    const body: Kale.JobRequest = { path: 'nb.ipynb', options: { nodes: 2 } };
    await expect(service.compile(body)).resolves.toEqual(result);
    expect(call().url).toBe(`${BASE}/compile`);
    expect(call().init.method).toBe('POST');
    expect(JSON.parse(call().init.body as string)).toEqual(body);
  });

  it('submits, and throws the diagnostics of a notebook that does not compile', async () => {
    respond(json({ name: 'nb-x1', backend: 'local', warnings: [] }, 201));
    await expect(service.submit({ path: 'nb.ipynb' })).resolves.toEqual({
      name: 'nb-x1',
      backend: 'local',
      warnings: []
    });

    const diagnostic = { severity: 'error', message: 'name `df`', cell: 3 };
    respond(
      json(
        { message: 'the notebook does not compile', errors: [diagnostic] },
        422
      )
    );
    const error = await service.submit({ path: 'nb.ipynb' }).catch(e => e);
    expect(error).toBeInstanceOf(KaleAPIError);
    expect(error.message).toBe('the notebook does not compile');
    expect(error.errors).toEqual([diagnostic]);
    expect(error.response.status).toBe(422);
  });

  it('throws the field and message of an invalid default', async () => {
    const message =
      "defaults.cpu: '4x' is not a Kubernetes quantity (set in the JupyterLab settings)";
    respond(
      json(
        {
          message,
          field: 'defaults.cpu',
          status: 400,
          reason: 'ConfigError',
          errors: [
            { severity: 'error', message, field: 'defaults.cpu', cell: null }
          ]
        },
        400
      )
    );
    const error = await service.getDefaults().catch(e => e);
    expect(error).toBeInstanceOf(KaleAPIError);
    expect(error.message).toBe(message);
    expect(error.field).toBe('defaults.cpu');
    expect(error.response.status).toBe(400);
    expect(call().url).toBe(`${BASE}/defaults`);
  });

  it('POSTs jobs/prune with the body, and throws the field of a bad one', async () => {
    const result = { dry_run: true, jobs: [] };
    respond(json(result));
    const body: Kale.IPruneBody = { older_than: '7d', dry_run: true };
    await expect(service.pruneJobs(body)).resolves.toEqual(result);
    expect(call().url).toBe(`${BASE}/jobs/prune`);
    expect(call().init.method).toBe('POST');
    expect(JSON.parse(call().init.body as string)).toEqual(body);

    respond(
      json({ message: 'older_than: must match', field: 'older_than' }, 400)
    );
    const error = await service.pruneJobs({ older_than: '7y' }).catch(e => e);
    expect(error.message).toBe('older_than: must match');
  });

  it('DELETEs a job and reports a missing one', async () => {
    respond(json({ deleted: 'a' }));
    await service.deleteJob('a');
    expect(call().init.method).toBe('DELETE');
    expect(call().url).toBe(`${BASE}/jobs/a`);

    respond(json({ message: 'job a does not exist' }, 404));
    await expect(service.deleteJob('a')).rejects.toThrow(
      'job a does not exist'
    );
  });
});

describe('KaleService.fileUrl', () => {
  const service = new KaleService(SETTINGS);
  afterEach(() => {
    document.cookie = '_xsrf=; expires=Thu, 01 Jan 1970 00:00:00 GMT';
  });

  it('is where Jupyter serves a file under the root, to open or download', () => {
    expect(service.fileUrl('outputs/job a/model #1.pt')).toBe(
      'http://localhost:8888/user/alice/files/outputs/job%20a/model%20%231.pt'
    );
    expect(service.fileUrl('outputs/j/m.pt', true)).toBe(
      'http://localhost:8888/user/alice/files/outputs/j/m.pt?download=1'
    );
  });

  it('carries the _xsrf cookie’s token, as JupyterLab’s own downloads', () => {
    document.cookie = '_xsrf=abc123';
    expect(service.fileUrl('o/m.pt', true)).toBe(
      'http://localhost:8888/user/alice/files/o/m.pt?_xsrf=abc123&download=1'
    );
  });
});
