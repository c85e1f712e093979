import type { Widget } from '@lumino/widgets';
import * as React from 'react';

import { JobOutputs } from '../panel/storage/job-outputs';
import type { Kale } from '../types';
import { until } from './helpers';
import { inAct, render } from './render';

const FOUND: Kale.IJobOutputs = {
  location: '/home/u/outputs/digits-ddp-k3v9q',
  files: [
    { path: 'model.pt', size: 2048 },
    { path: 'metrics.json', size: 120 }
  ],
  note: null,
  listed: true
};

async function opened(
  load: (name: string) => Promise<Kale.IJobOutputs>,
  status = 'Complete',
  fileUrl?: (path: string, download: boolean) => string
): Promise<Widget> {
  const widget = await render(
    <JobOutputs
      name="digits-ddp-k3v9q"
      status={status}
      load={load}
      fileUrl={fileUrl}
    />
  );
  const details = widget.node.querySelector('details')!;
  await inAct(() => {
    details.open = true;
    details.dispatchEvent(new Event('toggle'));
  });
  return widget;
}

describe('JobOutputs', () => {
  let widget: Widget | undefined;
  afterEach(() => widget?.dispose());

  it('asks for nothing until opened', async () => {
    const load = jest.fn(async () => FOUND);
    widget = await render(<JobOutputs name="j" status="Running" load={load} />);
    expect(load).not.toHaveBeenCalled();
    expect(widget.node.querySelector('summary')!.textContent).toBe('Outputs');
  });

  it('lists the files with their sizes, and where they are', async () => {
    const load = jest.fn(async () => FOUND);
    widget = await opened(load);
    await until(() => widget!.node.querySelector('li'));
    expect(load).toHaveBeenCalledWith('digits-ddp-k3v9q');
    const items = [...widget.node.querySelectorAll('li')].map(
      li => li.textContent
    );
    expect(items).toEqual(['model.pt 2 KiB', 'metrics.json 120 B']);
    expect(widget.node.querySelector('summary')!.textContent).toBe(
      'Outputs (2)'
    );
    expect(widget.node.textContent).toContain(
      'In /home/u/outputs/digits-ddp-k3v9q'
    );
  });

  it.each([
    [true, /No outputs yet: files the job writes to KALE_EXT_OUTPUT_DIR/],
    [false, /Not listed here: the outputs are on a volume only a pod can read/]
  ])('has an empty state (listed: %s)', async (listed, text) => {
    widget = await opened(async () => ({
      ...FOUND,
      files: [],
      listed,
      note: 'the job is still running'
    }));
    await until(() => text.test(widget!.node.textContent ?? ''));
    expect(widget.node.textContent).toContain('the job is still running');
  });

  it("shows the server's message when it cannot list them", async () => {
    widget = await opened(async () => {
      throw new Error('no job named digits-ddp-k3v9q');
    });
    const alert = await until(() =>
      widget!.node.querySelector('[role="alert"]')
    );
    expect(alert.textContent).toBe('no job named digits-ddp-k3v9q');
  });

  it('opens or downloads each file where Jupyter serves it, under the server root', async () => {
    const fileUrl = (path: string, download: boolean) =>
      `/files/${path}${download ? '?download=1' : ''}`;
    const found: Kale.IJobOutputs = {
      ...FOUND,
      files: [...FOUND.files, { path: 'latest', size: 0, link: 'model.pt' }],
      root_path: 'outputs/digits-ddp-k3v9q'
    };
    widget = await opened(async () => found, 'Complete', fileUrl);
    await until(() => widget!.node.querySelector('li'));
    const model = widget.node.querySelector('li')!;
    const [open, download] = [...model.querySelectorAll('a')];
    expect(open.getAttribute('href')).toBe(
      '/files/outputs/digits-ddp-k3v9q/model.pt'
    );
    expect(open.getAttribute('target')).toBe('_blank');
    expect(open.getAttribute('aria-label')).toBe('Open model.pt');
    expect(download.getAttribute('href')).toBe(
      '/files/outputs/digits-ddp-k3v9q/model.pt?download=1'
    );
    expect(download.getAttribute('download')).toBe('model.pt');
    expect(download.getAttribute('aria-label')).toBe('Download model.pt');
    // a link is listed, never followed
    const link = widget.node.querySelectorAll('li')[2];
    expect(link.textContent).toContain('latest');
    expect(link.querySelector('a')).toBeNull();
  });

  it('links nothing where the files are not under the server root', async () => {
    const fileUrl = jest.fn(() => '/files/x');
    widget = await opened(
      async () => ({ ...FOUND, root_path: null }),
      'Complete',
      fileUrl
    );
    await until(() => widget!.node.querySelector('li'));
    expect(widget.node.querySelector('a')).toBeNull();
    expect(fileUrl).not.toHaveBeenCalled();
  });
});
