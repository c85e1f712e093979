import { JupyterFrontEnd } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { INotebookTracker } from '@jupyterlab/notebook';
import { ServerConnection } from '@jupyterlab/services';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { CommandRegistry } from '@lumino/commands';
import { Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import plugin, { CommandIDs, PANEL_ID, kaleIcon } from '../index';
import type { KalePanel } from '../panel/widget';
import { until } from './helpers';

describe('kale-ext:plugin', () => {
  afterEach(() => jest.restoreAllMocks());

  function serve(): jest.SpyInstance {
    return jest.spyOn(ServerConnection, 'makeRequest').mockImplementation(
      async url =>
        new Response(
          JSON.stringify(
            String(url).endsWith('/tags')
              ? { tags: [] }
              : String(url).endsWith('/runtimes')
                ? { runtimes: [] }
                : String(url).endsWith('/defaults')
                  ? { defaults: { runtime: 'torch-distributed' }, sources: {} }
                  : {
                      name: 'local',
                      reason: 'no kubeconfig found: runs here',
                      namespace: null
                    }
          ),
          { status: 200 }
        )
    );
  }

  function fakeApp(commands: CommandRegistry) {
    return {
      commands,
      shell: { add: jest.fn(), activateById: jest.fn() },
      serviceManager: { serverSettings: ServerConnection.makeSettings() }
    };
  }

  const tracker = () =>
    ({
      currentWidget: null,
      activeCell: null,
      currentChanged: new Signal({}),
      activeCellChanged: new Signal({}),
      widgetAdded: new Signal({}),
      forEach: () => undefined
    }) as unknown as INotebookTracker;

  it('adds the panel to the left sidebar and registers its commands', async () => {
    serve();
    const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    const commands = new CommandRegistry();
    const app = fakeApp(commands);
    const add = app.shell.add;

    expect(plugin.id).toBe('kale-ext:plugin');
    expect(plugin.autoStart).toBe(true);
    plugin.activate(app as unknown as JupyterFrontEnd, tracker(), null, null);

    expect(add).toHaveBeenCalledTimes(1);
    const [panel, area] = add.mock.calls[0] as [Widget, string];
    expect(area).toBe('left');
    expect(panel.id).toBe(PANEL_ID);
    expect(panel.title.caption).toBe('kale_ext: distributed training');
    expect(panel.title.icon).toBe(kaleIcon);
    expect(commands.hasCommand(CommandIDs.openPanel)).toBe(true);
    expect(commands.hasCommand(CommandIDs.openLogs)).toBe(true);
    expect(commands.hasCommand(CommandIDs.editDefaults)).toBe(true);
    expect(log).toHaveBeenCalledWith('kale_ext is activated');
    panel.dispose();
  });

  it('submits from the palette and from Ctrl/Cmd+Enter in the panel', () => {
    serve();
    jest.spyOn(console, 'log').mockImplementation(() => undefined);
    const commands = new CommandRegistry();
    const app = fakeApp(commands);
    const palette = { addItem: jest.fn() } as unknown as ICommandPalette;
    plugin.activate(
      app as unknown as JupyterFrontEnd,
      tracker(),
      palette,
      null
    );
    expect(commands.label(CommandIDs.submit)).toBe('Kale: Submit job');
    expect(palette.addItem).toHaveBeenCalledWith({
      command: CommandIDs.submit,
      category: 'kale_ext'
    });
    expect(
      commands.keyBindings.map(b => [b.command, b.keys.join(' '), b.selector])
    ).toContainEqual([CommandIDs.submit, 'Ctrl Enter', `#${PANEL_ID}`]); // Cmd on a Mac
    // no notebook: nothing to submit
    expect(commands.isEnabled(CommandIDs.submit)).toBe(false);
    (app.shell.add.mock.calls[0][0] as Widget).dispose();
  });

  it("loads the defaults again when the user's settings change", async () => {
    const makeRequest = serve();
    jest.spyOn(console, 'log').mockImplementation(() => undefined);
    const app = fakeApp(new CommandRegistry());
    const changed = new Signal<unknown, void>({});
    const registry = {
      load: jest.fn().mockResolvedValue({ changed })
    } as unknown as ISettingRegistry;
    plugin.activate(
      app as unknown as JupyterFrontEnd,
      tracker(),
      null,
      registry
    );
    expect(registry.load).toHaveBeenCalledWith('kale-ext:plugin');
    const asked = (end: string) =>
      makeRequest.mock.calls.filter(([url]) => String(url).endsWith(end))
        .length;
    await until(() => asked('/defaults') === 1);
    await Promise.resolve(); // the registry's load resolves

    changed.emit();
    await until(() => asked('/defaults') === 2);
    expect(asked('/backend')).toBe(2);
    expect(asked('/tags')).toBe(1);
    (app.shell.add.mock.calls[0][0] as Widget).dispose();
  });

  it("edits the defaults in JupyterLab's Settings Editor", async () => {
    serve();
    jest.spyOn(console, 'log').mockImplementation(() => undefined);
    const commands = new CommandRegistry();
    const app = fakeApp(commands);
    const palette = { addItem: jest.fn() } as unknown as ICommandPalette;
    plugin.activate(
      app as unknown as JupyterFrontEnd,
      tracker(),
      palette,
      null
    );

    expect(commands.label(CommandIDs.editDefaults)).toBe(
      'Edit kale_ext defaults'
    );
    expect(palette.addItem).toHaveBeenCalledWith({
      command: CommandIDs.editDefaults,
      category: 'kale_ext'
    });
    // No Settings Editor (its extension is disabled): nothing to open, and
    // the panel offers no button.
    const panel = app.shell.add.mock.calls[0][0] as KalePanel;
    expect(commands.isEnabled(CommandIDs.editDefaults)).toBe(false);
    expect(panel.state.canEditDefaults).toBe(false);
    await commands.execute(CommandIDs.editDefaults);

    const open = jest.fn();
    commands.addCommand('settingeditor:open', { execute: open });
    expect(commands.isEnabled(CommandIDs.editDefaults)).toBe(true);
    expect(panel.state.canEditDefaults).toBe(true);
    await commands.execute(CommandIDs.editDefaults);
    expect(open).toHaveBeenCalledWith({ query: 'kale_ext' });

    // The panel's "Edit defaults" runs the same command.
    panel.state.editDefaults();
    await until(() => open.mock.calls.length === 2);
    panel.dispose();
  });

  it("restores no logs tab of a job deleted since, asks nothing of it, and closes a job's tab when it is deleted", async () => {
    const makeRequest = jest
      .spyOn(ServerConnection, 'makeRequest')
      .mockImplementation(async (url, init) => {
        const path = new URL(String(url)).pathname;
        const body = path.endsWith('/kale-ext/jobs')
          ? { jobs: [{ name: 'kept', status: 'Complete' }] }
          : path.endsWith('/tags')
            ? { tags: [] }
            : path.endsWith('/runtimes')
              ? { runtimes: [] }
              : {};
        return init?.method === 'DELETE'
          ? new Response(null, { status: 204 })
          : new Response(JSON.stringify(body), { status: 200 });
      });
    jest.spyOn(console, 'log').mockImplementation(() => undefined);
    const commands = new CommandRegistry();
    const app = fakeApp(commands);
    plugin.activate(app as unknown as JupyterFrontEnd, tracker(), null, null);
    const panel = app.shell.add.mock.calls[0][0] as KalePanel;
    const asked = () =>
      makeRequest.mock.calls.map(([url]) => new URL(String(url)).pathname);

    // as the layout restorer asks after a reload
    const gone = await commands.execute(CommandIDs.openLogs, {
      name: 'gone',
      restoring: true
    });
    expect(gone).toBeUndefined();
    const kept = (await commands.execute(CommandIDs.openLogs, {
      name: 'kept',
      restoring: true
    })) as Widget;
    expect(kept.id).toBe('kale-ext-logs-kept');
    expect(asked().filter(a => a.includes('/jobs/gone'))).toEqual([]);

    // deleted from the panel: its tab closes before the delete is sent
    let openAtDelete: boolean | null = null;
    makeRequest.mockImplementationOnce(async () => {
      openAtDelete = !kept.isDisposed;
      return new Response(null, { status: 204 });
    });
    await panel.state.jobList.delete('kept');
    expect(openAtDelete).toBe(false);
    expect(kept.isDisposed).toBe(true);
    panel.dispose();
  });
});
