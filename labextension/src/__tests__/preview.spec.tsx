import type { Widget } from '@lumino/widgets';
import * as React from 'react';

import { emptySweep } from '../form/sweep';
import { PreviewView } from '../panel/preview/preview';
import type { Kale } from '../types';
import { compileResult } from './fakes';
import { render } from './render';

const YAML = [
  'kind: TrainJob',
  'metadata:',
  '  name: digits-ddp-k3v9q',
  'spec:',
  '  trainer:',
  '    command:',
  '    - |',
  ...Array.from({ length: 30 }, (_, i) => `      bootstrap ${i}`),
  `    - ${'x'.repeat(500)}`,
  '    numNodes: 2',
  ''
].join('\n');

function preview(
  change: Partial<Kale.ICompileResult>,
  backend: Kale.IBackend = { name: 'local', reason: '', namespace: null },
  packages: string[] | null = null
): Promise<Widget> {
  return render(
    <PreviewView
      compile={compileResult({
        job_name: 'digits-ddp-k3v9q',
        nodes: 2,
        procs_per_node: 1,
        trainjob_yaml: YAML,
        config: {
          requests: { cpu: '500m' },
          limits: { cpu: '2', memory: '4Gi' }
        },
        packages: ['scikit-learn==1.9.1', 'torch==2.13.0'],
        workspace: {
          root: 'examples',
          files: 3,
          size: 11939,
          max_size: 10485760,
          excluded: 0,
          largest: [],
          skipped: [],
          modules: []
        },
        ...change
      })}
      backend={backend}
      runtime={{ image: 'local' } as Kale.IRuntime}
      packages={packages}
    />
  );
}

function facts(widget: Widget): Record<string, string> {
  const out: Record<string, string> = {};
  widget.node.querySelectorAll('[data-fact]').forEach(dd => {
    out[dd.getAttribute('data-fact')!] = dd.textContent ?? '';
  });
  return out;
}

describe('PreviewView', () => {
  let widget: Widget | undefined;
  afterEach(() => widget?.dispose());

  it.each([
    ['no train() call: no settings from the notebook', undefined, {}, null],
    [
      "a setting the panel's options override, each named",
      [
        {
          setting: 'resources',
          value: { cpu: '1' },
          cell: 2,
          line: 4,
          overridden_by: ['cpu', 'memory']
        }
      ],
      { cpu: '2', memory: '4Gi' },
      'resources{"cpu":"1"} cell 3, line 4 overridden by the panel: cpu 2, memory 4Gi'
    ],
    [
      'a setting kept as the notebook has it',
      [
        {
          setting: 'runtime',
          value: 'xgboost-distributed',
          cell: 0,
          line: null,
          overridden_by: []
        }
      ],
      { nodes: 2 },
      'runtimexgboost-distributed cell 1'
    ]
  ] as const)('%s', async (_, provenance, options, shown) => {
    widget = await render(
      <PreviewView
        compile={compileResult({
          trainjob_yaml: YAML,
          provenance: provenance?.map(p => ({
            ...p,
            overridden_by: [...p.overridden_by]
          }))
        })}
        backend={null}
        packages={null}
        options={options}
      />
    );
    const list = widget.node.querySelector(
      '[aria-label="Read from the notebook"]'
    );
    expect(list?.textContent ?? null).toBe(shown);
  });

  it('sums the job up first: name, backend, shape, resources, runtime, packages, files, how it runs', async () => {
    widget = await preview({});
    expect(facts(widget)).toEqual({
      name: 'digits-ddp-k3v9q',
      backend: 'Local: processes on this machine',
      shape: '2 nodes × 1 process',
      resources: 'CPU 500m–2 · memory 4Gi',
      runtime: 'torch-distributed · local',
      packages: 'scikit-learn==1.9.1, torch==2.13.0',
      parameters: 'the notebook’s defaults',
      workspace: 'examples: 3 files, 11.7 KiB (at most 10 MiB)',
      command:
        '2 processes here, one per node, each with PET_NNODES=2, PET_NODE_RANK=0…1, PET_MASTER_ADDR=127.0.0.1, running the trainer command of the TrainJob below'
    });
  });

  it('says where the processes per node come from on a line of its own, as the server words it', async () => {
    widget = await preview({
      procs_per_node: 4,
      shape: '2 nodes × 4 processes',
      procs_why: "the runtime's choice: 4 CPUs per node"
    });
    expect(facts(widget).shape).toBe('2 nodes × 4 processes');
    expect(facts(widget)['procs-why']).toBe(
      "processes per node: the runtime's choice: 4 CPUs per node"
    );
    // the facts are a two-column grid: a <dd> without its <dt> moved every later fact a cell
    widget.node.querySelectorAll('dl').forEach(list => {
      const tags = Array.from(list.children).map(c => c.tagName);
      expect(tags.join(' ')).toBe(
        Array.from({ length: tags.length / 2 }, () => 'DT DD').join(' ')
      );
    });
  });

  it('shows the exact command and the volumes when the server gives them', async () => {
    widget = await preview({
      command: 'python -c ...',
      volumes: [
        {
          name: 'data',
          kind: 'pvc',
          source: 'data',
          mount: '/data',
          mount_path: '/data',
          read_only: true,
          local: '/srv/data'
        }
      ],
      outputs: 'pvc:results:/results'
    });
    expect(facts(widget).volumes).toBe(
      'pvc data at /data, read-only (here: /srv/data)'
    );
    expect(facts(widget).outputs).toBe('pvc:results:/results');
    expect(
      widget.node.querySelector('[aria-label="Local command"]')?.textContent
    ).toBe('python -c ...');
  });

  it('says where a cluster job goes, and which packages were edited', async () => {
    widget = await preview(
      {},
      { name: 'kubernetes', reason: '', namespace: 'team' },
      ['numpy==2.1.0']
    );
    const f = facts(widget);
    expect(f.backend).toBe('Kubernetes, namespace team');
    expect(f.packages).toBe('numpy==2.1.0 (edited)');
    expect(f.command).toBeUndefined();
  });

  it('says where each package comes from and when it is installed', async () => {
    const source = (
      requirement: string,
      origin: string,
      when: string
    ): Kale.IPackageSource => ({
      requirement,
      source: 'import',
      cell: 0,
      line: 1,
      module: null,
      pinned: false,
      pinned_here: false,
      check: 'import',
      origin,
      when
    });
    widget = await preview({
      package_sources: [
        source(
          'xgboost-cpu',
          'imported (cell 1, line 1)',
          'only if `import xgboost` fails'
        ),
        source(
          'tqdm==4.67.1',
          'a %pip line (cell 2, line 1)',
          'if the image lacks it'
        )
      ],
      pinning: { on: false, why: 'the default on a cluster' }
    });
    expect(facts(widget).packages).toBe(
      'xgboost-cpu: imported (cell 1, line 1); installed only if `import xgboost` fails' +
        'tqdm==4.67.1: a %pip line (cell 2, line 1); installed if the image lacks it' +
        'pinning off (the default on a cluster)'
    );
    widget.dispose();
    widget = await preview({ package_sources: [], pinning: null });
    expect(facts(widget).packages).toBe('none');
  });

  it('folds the bootstrap script and the blob, keeping the YAML whole', async () => {
    widget = await preview({});
    const pre = widget.node.querySelector('[aria-label="TrainJob YAML"]')!;
    const folds = [...pre.querySelectorAll('details > summary')];
    expect(folds.map(s => s.textContent)).toEqual([
      '30 lines',
      '500 characters'
    ]);
    expect(pre.querySelectorAll('details[open]')).toHaveLength(0);
    // the text is all there (copying the view copies it all)
    expect(
      pre.textContent?.replace('30 lines', '').replace('500 characters', '')
    ).toBe(YAML);
  });

  it('says why there is nothing to show', async () => {
    widget = await render(
      <PreviewView
        compile={compileResult({ ok: false, trainjob_yaml: undefined })}
        backend={null}
        packages={null}
      />
    );
    expect(widget.node.textContent).toBe(
      'Fix the errors to see what the job will be.'
    );
  });

  it('says what differs from the notebook: each parameter set, a sweep and its trials', async () => {
    widget = await render(
      <PreviewView
        compile={compileResult({
          job_name: 'nb-x',
          trainjob_yaml: YAML,
          parameters: { epochs: 6, lr: 0.01, batch: 32 }
        })}
        backend={null}
        packages={null}
        options={{ parameters: { epochs: '2', lr: '0.1', batch: 32 } }}
        sweep={{
          ...emptySweep(),
          params: { lr: '0.1, 0.2, 0.3', batch: '32, 64' }
        }}
      />
    );
    expect(facts(widget).parameters).toBe('epochs: 6 → 2');
    expect(facts(widget).sweep).toBe(
      '6 trials (grid: every combination), named nb-x-0 … nb-x-5batch: 32, 64lr: 0.1, 0.2, 0.3'
    );
  });

  it('opens the compiled function from the preview', async () => {
    const onViewSource = jest.fn();
    widget = await render(
      <PreviewView
        compile={compileResult({
          trainjob_yaml: YAML,
          function_name: 'train_nb',
          source: 'def train_nb():\n    pass\n'
        })}
        backend={null}
        packages={null}
        onViewSource={onViewSource}
      />
    );
    const button = Array.from(widget.node.querySelectorAll('button')).find(
      b => b.textContent === 'View compiled function'
    );
    button!.click();
    expect(onViewSource).toHaveBeenCalledWith(
      'train_nb',
      'def train_nb():\n    pass\n'
    );
  });
});
