import { ILogsTab, placeLogs } from '../logs/tabs';

const tab = (
  job: string,
  notebook: string | null = 'a.ipynb',
  pinned = false
): ILogsTab => ({ job, notebook, pinned });

describe('placeLogs', () => {
  it('replaces the last tab a submit from the notebook opened', () => {
    const tabs = [tab('a-1'), tab('b-1', 'b.ipynb'), tab('a-2')];
    expect(placeLogs(tabs, 'a-3', 'a.ipynb')).toEqual({
      kind: 'replace',
      index: 2
    });
  });

  it('keeps a pinned tab and replaces the one before it', () => {
    const tabs = [tab('a-1'), tab('a-2', 'a.ipynb', true)];
    expect(placeLogs(tabs, 'a-3', 'a.ipynb')).toEqual({
      kind: 'replace',
      index: 0
    });
    expect(placeLogs([tabs[1]], 'a-3', 'a.ipynb')).toEqual({ kind: 'new' });
  });

  it("never replaces another notebook's tab, nor one opened from a row", () => {
    const tabs = [tab('b-1', 'b.ipynb'), tab('a-1', null)];
    expect(placeLogs(tabs, 'a-2', 'a.ipynb')).toEqual({ kind: 'new' });
  });

  it('shows the tab of a job already open', () => {
    const tabs = [tab('a-1'), tab('a-2')];
    expect(placeLogs(tabs, 'a-1', 'a.ipynb')).toEqual({
      kind: 'show',
      index: 0
    });
    expect(placeLogs(tabs, 'a-2', null)).toEqual({ kind: 'show', index: 1 });
  });

  it('opens a new tab from a row, replacing none', () => {
    expect(placeLogs([tab('a-1')], 'a-2', null)).toEqual({ kind: 'new' });
  });
});
