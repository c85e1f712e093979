import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import {
  Dialog,
  ICommandPalette,
  MainAreaWidget,
  WidgetTracker,
  showDialog
} from '@jupyterlab/apputils';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { IStateDB } from '@jupyterlab/statedb';
import type { ReadonlyPartialJSONObject } from '@lumino/coreutils';
import type { DockLayout, Widget } from '@lumino/widgets';

import { KaleService } from './api';
import { CompareView } from './compare/widget';
import { SweepView } from './compare/sweep-view';
import { kaleIcon } from './icon';
import { placeLogs } from './logs/tabs';
import { LogsView } from './logs/widget';
import { installSeriesColors } from './metrics/constants';
import type { IJobsView } from './panel/jobs/jobs-view';
import { SourceView } from './panel/preview/source-view';
import { PanelState } from './panel/state';
import { KalePanel, PANEL_ID } from './panel/widget';
import { CellTagBadges } from './tags/badges';

export { kaleIcon, PANEL_ID };

/**
 * The extension's commands.
 */
export namespace CommandIDs {
  export const openPanel = 'kale-ext:open-panel';
  export const openLogs = 'kale-ext:open-logs';
  export const editDefaults = 'kale-ext:edit-defaults';
  export const compare = 'kale-ext:compare';
  export const openSweep = 'kale-ext:open-sweep';
  export const submit = 'kale-ext:submit';
  export const viewSource = 'kale-ext:view-compiled-function';
}

/**
 * JupyterLab's Settings Editor command (from its settingeditor extension,
 * which may be absent).
 */
const OPEN_SETTINGS = 'settingeditor:open';

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'kale-ext:plugin',
  description: 'Run a tagged notebook as a distributed Kubeflow Trainer job.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [ICommandPalette, ISettingRegistry, ILayoutRestorer, IStateDB],
  activate: (
    app: JupyterFrontEnd,
    notebooks: INotebookTracker,
    palette: ICommandPalette | null,
    settings: ISettingRegistry | null,
    restorer: ILayoutRestorer | null,
    stateDB: IStateDB | null
  ) => {
    installSeriesColors();
    const service = new KaleService(app.serviceManager.serverSettings);
    const logs = new WidgetTracker<MainAreaWidget<LogsView>>({
      namespace: 'kale-ext-logs'
    });
    const sweeps = new WidgetTracker<MainAreaWidget<SweepView>>({
      namespace: 'kale-ext-sweeps'
    });

    const state: PanelState = new PanelState({
      service,
      tracker: notebooks,
      openLogs: (name, notebook) =>
        void app.commands.execute(
          CommandIDs.openLogs,
          notebook ? { name, notebook } : { name }
        ),
      openSweep: name =>
        void app.commands.execute(CommandIDs.openSweep, { name }),
      compare: names =>
        void app.commands.execute(CommandIDs.compare, { names }),
      viewSource: (name, source, notebook) =>
        void app.commands.execute(CommandIDs.viewSource, {
          name,
          source,
          notebook
        }),
      editDefaults: () => void app.commands.execute(CommandIDs.editDefaults),
      canEditDefaults: () => app.commands.isEnabled(CommandIDs.editDefaults),
      activate: notebook => app.shell.activateById(notebook.id),
      confirm: async name =>
        (
          await showDialog({
            title: 'Delete job',
            body: Private.deleteText(name, state.server.backend?.name),
            buttons: [
              Dialog.cancelButton(),
              Dialog.warnButton({ label: 'Delete' })
            ]
          })
        ).button.accept,
      openNotebook: async path => {
        if (!(await Private.exists(app, path))) {
          return null; // gone since (a job's record outlives its notebook)
        }
        const widget = await app.commands.execute('docmanager:open', {
          path
        });
        return widget instanceof NotebookPanel ? widget : null;
      },
      jobsViewStore: stateDB
        ? {
            fetch: async () =>
              (await stateDB.fetch(Private.JOBS_VIEW)) as IJobsView | undefined,
            save: async view => {
              await stateDB.save(
                Private.JOBS_VIEW,
                view as unknown as ReadonlyPartialJSONObject
              );
            }
          }
        : undefined
    });
    const panel = new KalePanel(state);
    panel.title.icon = kaleIcon;
    app.shell.add(panel, 'left', { rank: 1000 });
    // After a reload: the panel as it was (open or not), the logs tabs open.
    restorer?.add(panel, PANEL_ID);
    // (a restored logs tab only if its job is still listed: a job deleted
    // elsewhere, or while the page was away, has none)
    void restorer?.restore(logs, {
      command: CommandIDs.openLogs,
      args: widget => ({
        name: widget.content.jobName,
        restoring: true,
        notebook: widget.content.notebook,
        pinned: widget.content.pinned
      }),
      name: widget => widget.content.jobName
    });
    // A job deleted from the panel: its logs tab closes first.
    state.jobList.jobDeleting.connect((_, name) => {
      logs.find(w => w.content.jobName === name)?.dispose();
    });
    const listed = Private.once(() => service.listJobs());
    void restorer?.restore(sweeps, {
      command: CommandIDs.openSweep,
      args: widget => ({ name: widget.content.sweepName }),
      name: widget => widget.content.sweepName
    });

    const badges = new CellTagBadges(notebooks);
    void state.load().then(() => badges.setTags(state.server.tags));

    app.commands.addCommand(CommandIDs.openPanel, {
      label: 'Open the distributed training panel',
      caption: 'kale_ext: distributed training',
      execute: () => app.shell.activateById(PANEL_ID)
    });
    app.commands.addCommand(CommandIDs.openLogs, {
      label: args => (args.name ? `Logs of ${args.name}` : 'Job logs'),
      execute: async args => {
        const name = String(args.name ?? '');
        if (!name) {
          return;
        }
        if (args.restoring && !(await Private.isListed(listed, name))) {
          return; // deleted since the page last showed it
        }
        // notebook: opened by that notebook's submit (see logs/tabs.ts)
        const notebook =
          typeof args.notebook === 'string' ? args.notebook : null;
        const submitted = notebook !== null && !args.restoring;
        const open = logs.filter(() => true);
        const place = placeLogs(
          open.map(w => ({
            job: w.content.jobName,
            notebook: w.content.notebook,
            pinned: w.content.pinned
          })),
          name,
          submitted ? notebook : null
        );
        if (place.kind === 'show') {
          if (!submitted) {
            app.shell.activateById(open[place.index].id);
          }
          return open[place.index];
        }
        const content = new LogsView({
          service,
          name,
          timelines: state.jobList.timelines,
          notebook,
          pinned: args.pinned === true
        });
        const widget = new MainAreaWidget({ content });
        widget.id = `kale-ext-logs-${name}`;
        widget.title.icon = kaleIcon;
        let pinned = content.pinned;
        content.changed.connect(() => {
          if (content.pinned !== pinned) {
            pinned = content.pinned;
            void logs.save(widget); // a reload keeps the pin
          }
        });
        void logs.add(widget);
        const replaced = place.kind === 'replace' ? open[place.index] : null;
        app.shell.add(widget, 'main', {
          ...Private.where(replaced, open, notebooks, notebook),
          // a submit leaves the focus in the notebook
          activate: !submitted
        });
        replaced?.dispose(); // its place is the new tab's
        return widget;
      }
    });
    app.commands.addCommand(CommandIDs.compare, {
      label: 'Compare jobs side by side',
      execute: args => {
        const names = Array.isArray(args.names)
          ? args.names.map(String).filter(Boolean)
          : [];
        if (names.length < 2) {
          return;
        }
        const content = new CompareView({
          service,
          names,
          openLogs: name =>
            void app.commands.execute(CommandIDs.openLogs, { name })
        });
        const widget = new MainAreaWidget({ content });
        widget.id = `kale-ext-compare-tab-${Date.now()}`;
        widget.title.icon = kaleIcon;
        app.shell.add(widget, 'main');
        app.shell.activateById(widget.id);
        return widget;
      }
    });
    app.commands.addCommand(CommandIDs.openSweep, {
      label: args => (args.name ? `Sweep ${args.name}` : 'Sweep'),
      execute: args => {
        const name = String(args.name ?? '');
        if (!name) {
          return;
        }
        const open = sweeps.find(w => w.content.sweepName === name);
        if (open) {
          open.content.refresh();
          app.shell.activateById(open.id);
          return open;
        }
        const content = new SweepView({
          service,
          name,
          openLogs: job =>
            void app.commands.execute(CommandIDs.openLogs, { name: job }),
          compare: names =>
            void app.commands.execute(CommandIDs.compare, { names })
        });
        const widget = new MainAreaWidget({ content });
        widget.id = `kale-ext-sweep-tab-${name}`;
        widget.title.icon = kaleIcon;
        void sweeps.add(widget);
        app.shell.add(widget, 'main');
        app.shell.activateById(widget.id);
        return widget;
      }
    });
    app.commands.addCommand(CommandIDs.viewSource, {
      label: 'View compiled function',
      caption: 'The function kale_ext compiled from the notebook, read-only',
      execute: args => {
        const name = String(args.name ?? 'train');
        const source = String(args.source ?? '');
        const notebook = String(args.notebook ?? '');
        // one tab per notebook, showing its latest compile
        const open = Array.from(app.shell.widgets('main')).find(
          w =>
            w instanceof MainAreaWidget &&
            w.content instanceof SourceView &&
            w.content.notebook === notebook
        ) as MainAreaWidget<SourceView> | undefined;
        if (open) {
          open.content.setSource(name, source);
          app.shell.activateById(open.id);
          return open;
        }
        const content = new SourceView({ name, source, notebook });
        const widget = new MainAreaWidget({ content });
        widget.id = `kale-ext-source-${Private.nextSource()}`;
        widget.title.icon = kaleIcon;
        app.shell.add(widget, 'main', { mode: 'split-right' });
        app.shell.activateById(widget.id);
        return widget;
      }
    });
    app.commands.addCommand(CommandIDs.submit, {
      label: 'Kale: Submit job',
      caption:
        "Submit the notebook with the panel's choices, or start its sweep (Ctrl/Cmd+Enter in the panel)",
      // a blocked submit says why in the panel
      isEnabled: () => state.notebook !== null && !state.submitting,
      execute: () => state.submit()
    });
    app.commands.addKeyBinding({
      command: CommandIDs.submit,
      keys: ['Accel Enter'],
      selector: `#${PANEL_ID}`
    });
    app.commands.addCommand(CommandIDs.editDefaults, {
      label: 'Edit kale_ext defaults',
      caption:
        'The runtime, nodes, resources and backend new jobs start from (Settings Editor)',
      isEnabled: () => app.commands.hasCommand(OPEN_SETTINGS),
      execute: () => {
        if (app.commands.hasCommand(OPEN_SETTINGS)) {
          return app.commands.execute(OPEN_SETTINGS, { query: 'kale_ext' });
        }
      }
    });
    palette?.addItem({ command: CommandIDs.openPanel, category: 'kale_ext' });
    palette?.addItem({ command: CommandIDs.submit, category: 'kale_ext' });
    palette?.addItem({
      command: CommandIDs.editDefaults,
      category: 'kale_ext'
    });

    // The server reads the user's settings file itself (the defaults' top
    // layer): when JupyterLab has saved a change, the panel asks again.
    settings
      ?.load(plugin.id)
      .then(loaded =>
        loaded.changed.connect(() => void state.settingsChanged())
      )
      .catch(reason =>
        console.warn('kale_ext: cannot load its settings', reason)
      );

    console.log('kale_ext is activated');
  }
};

export default plugin;

namespace Private {
  let sources = 0;

  /** A new compiled function tab's number. */
  export function nextSource(): number {
    return sources++;
  }

  /**
   * Where a new logs tab goes: in place of the tab it replaces, else beside
   * the last logs tab, else (a submit's) to the right of its notebook.
   */
  export function where(
    replaced: Widget | null,
    open: Widget[],
    notebooks: INotebookTracker,
    notebook: string | null
  ): { ref?: string; mode?: DockLayout.InsertMode } {
    const beside = replaced ?? open[open.length - 1];
    if (beside) {
      return { ref: beside.id, mode: 'tab-after' };
    }
    const panel = notebook
      ? notebooks.find(p => p.context.path === notebook)
      : undefined;
    return panel ? { ref: panel.id, mode: 'split-right' } : {};
  }

  /**
   * Where the jobs list's arrangement is kept (JupyterLab's state database).
   */
  export const JOBS_VIEW = 'kale-ext:jobs-view';

  /**
   * Whether a file is there, read from its folder's listing (asking for the
   * file itself would put a 404 in the browser's console when it is not).
   */
  export async function exists(
    app: JupyterFrontEnd,
    path: string
  ): Promise<boolean> {
    const folder = path.includes('/')
      ? path.slice(0, path.lastIndexOf('/'))
      : '';
    try {
      const listing = await app.serviceManager.contents.get(folder, {
        type: 'directory',
        content: true
      });
      const files = (listing.content ?? []) as { path: string }[];
      return files.some(f => f.path === path);
    } catch {
      return false;
    }
  }

  /**
   * `make()`'s promise, made at the first call (the jobs as listed when the
   * layout is restored).
   */
  export function once<T>(make: () => Promise<T>): () => Promise<T> {
    let made: Promise<T> | null = null;
    return () => (made ??= make());
  }

  /**
   * Whether job `name` is in the jobs list (asked of the list, never of the
   * job: a job that is gone would answer 404, in the browser's console).
   * When the list cannot be read, it is taken to be there.
   */
  export async function isListed(
    jobs: () => Promise<{ name: string }[]>,
    name: string
  ): Promise<boolean> {
    try {
      return (await jobs()).some(job => job.name === name);
    } catch {
      return true;
    }
  }

  /**
   * What deleting a job does, on its backend.
   */
  export function deleteText(name: string, backend?: string): string {
    return backend === 'local'
      ? `Delete ${name}? Its processes are stopped and its logs removed; its outputs stay.`
      : `Delete ${name}? Its pods and logs are removed.`;
  }
}
