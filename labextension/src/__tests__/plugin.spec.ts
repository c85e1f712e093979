import { JupyterFrontEnd } from '@jupyterlab/application';
import { INotebookTracker } from '@jupyterlab/notebook';
import { ServerConnection } from '@jupyterlab/services';
import { CommandRegistry } from '@lumino/commands';
import { Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import plugin, { CommandIDs, PANEL_ID, kaleIcon } from '../index';

describe('kale-ext:plugin', () => {
  afterEach(() => jest.restoreAllMocks());

  it('adds the panel to the left sidebar and registers its commands', async () => {
    jest.spyOn(ServerConnection, 'makeRequest').mockImplementation(
      async url =>
        new Response(
          JSON.stringify(
            String(url).endsWith('/tags')
              ? { tags: [] }
              : String(url).endsWith('/runtimes')
                ? { runtimes: [] }
                : {
                    name: 'local',
                    reason: 'no kubeconfig found: runs here',
                    namespace: null
                  }
          ),
          { status: 200 }
        )
    );
    const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    const add = jest.fn();
    const commands = new CommandRegistry();
    const app = {
      commands,
      shell: { add, activateById: jest.fn() },
      serviceManager: { serverSettings: ServerConnection.makeSettings() }
    } as unknown as JupyterFrontEnd;
    const tracker = {
      currentWidget: null,
      activeCell: null,
      currentChanged: new Signal({}),
      activeCellChanged: new Signal({}),
      widgetAdded: new Signal({}),
      forEach: () => undefined
    } as unknown as INotebookTracker;

    expect(plugin.id).toBe('kale-ext:plugin');
    expect(plugin.autoStart).toBe(true);
    plugin.activate(app, tracker, null);

    expect(add).toHaveBeenCalledTimes(1);
    const [panel, area] = add.mock.calls[0] as [Widget, string];
    expect(area).toBe('left');
    expect(panel.id).toBe(PANEL_ID);
    expect(panel.title.caption).toBe('kale_ext: distributed training');
    expect(panel.title.icon).toBe(kaleIcon);
    expect(commands.hasCommand(CommandIDs.openPanel)).toBe(true);
    expect(commands.hasCommand(CommandIDs.openLogs)).toBe(true);
    expect(log).toHaveBeenCalledWith('kale_ext is activated');
    panel.dispose();
  });
});
