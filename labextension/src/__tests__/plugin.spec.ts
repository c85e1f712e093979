import { JupyterFrontEnd } from '@jupyterlab/application';
import { Widget } from '@lumino/widgets';

import plugin, { PANEL_ID, kaleIcon } from '../index';

describe('kale-ext:plugin', () => {
  it('adds the placeholder panel to the left sidebar', () => {
    const add = jest.fn();
    const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    const app = { shell: { add } } as unknown as JupyterFrontEnd;

    expect(plugin.id).toBe('kale-ext:plugin');
    expect(plugin.autoStart).toBe(true);
    plugin.activate(app);

    expect(add).toHaveBeenCalledTimes(1);
    const [panel, area] = add.mock.calls[0] as [Widget, string];
    expect(area).toBe('left');
    expect(panel.id).toBe(PANEL_ID);
    expect(panel.title.caption).toBe('kale_ext: distributed training');
    expect(panel.title.icon).toBe(kaleIcon);
    expect(panel.node.textContent).toContain('kale_ext');
    expect(panel.node.textContent).toContain('coming soon');
    expect(log).toHaveBeenCalledWith('kale_ext is activated');
    log.mockRestore();
  });
});
