import type { Widget } from '@lumino/widgets';
import * as React from 'react';

import { WorkspaceFact, workspaceLine } from '../panel/preview/workspace';
import type { Kale } from '../types';
import { render } from './render';

const WORKSPACE: Kale.IWorkspace = {
  root: 'examples',
  files: 2,
  size: 3072,
  max_size: 10485760,
  excluded: 4,
  largest: [],
  skipped: [{ path: 'link', reason: 'points outside the workspace' }],
  modules: ['helpers'],
  list: [
    { path: 'data.csv', size: 2048 },
    { path: 'helpers.py', size: 1024 }
  ],
  list_truncated: false
};

describe('WorkspaceFact', () => {
  let widget: Widget | undefined;
  afterEach(() => widget?.dispose());

  it('says files, size, cap and how many were excluded', () => {
    expect(workspaceLine(WORKSPACE)).toBe(
      'examples: 2 files, 3 KiB (at most 10 MiB), 4 excluded'
    );
    expect(workspaceLine({ ...WORKSPACE, excluded: 0, files: 1 })).toBe(
      'examples: 1 file, 3 KiB (at most 10 MiB)'
    );
  });

  it('lists the files with their sizes behind a disclosure, and what was skipped', async () => {
    widget = await render(<WorkspaceFact workspace={WORKSPACE} />);
    const details = widget.node.querySelector('details')!;
    expect(details.open).toBe(false);
    expect(details.querySelector('summary')!.textContent).toBe(
      'List the 2 files'
    );
    const items = [...details.querySelectorAll('li')].map(li => li.textContent);
    expect(items).toEqual(['data.csv 2 KiB', 'helpers.py 1 KiB']);
    expect(widget.node.textContent).toContain(
      'Skipped: link (points outside the workspace)'
    );
  });

  it('says when the list is cut short, and when there is no workspace', async () => {
    widget = await render(
      <WorkspaceFact
        workspace={{ ...WORKSPACE, files: 1500, list_truncated: true }}
      />
    );
    expect(widget.node.textContent).toContain('The first 2 of 1500 files.');
    widget.dispose();
    widget = await render(
      <div>
        <WorkspaceFact workspace={null} />
      </div>
    );
    expect(widget.node.textContent).toBe('none: the job gets no files');
  });
});
