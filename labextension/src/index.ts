import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { LabIcon } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';

/**
 * The id of the left-sidebar panel.
 */
export const PANEL_ID = 'kale-ext-panel';

/**
 * A kale leaf; `jp-icon3` makes it follow the theme.
 */
export const kaleIcon = new LabIcon({
  name: 'kale-ext:kale',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">' +
    '<path class="jp-icon3" fill="#616161" d="M12 2C6.5 6.5 4 10.5 4 14.5 4 19 7.6 22 12 22s8-3 8-7.5C20 10.5 17.5 6.5 12 2zm1 17.9V11h-2v8.9a5.6 5.6 0 0 1-5-5.4c0-2.8 1.8-5.9 6-9.8 4.2 3.9 6 7 6 9.8a5.6 5.6 0 0 1-5 5.4z"/>' +
    '</svg>'
});

/**
 * A placeholder for the distributed-training panel.
 */
function createPanel(): Widget {
  const panel = new Widget();
  panel.id = PANEL_ID;
  panel.addClass('kale-ext-Panel');
  panel.title.icon = kaleIcon;
  panel.title.caption = 'kale_ext: distributed training';

  const heading = document.createElement('h2');
  heading.textContent = 'kale_ext';
  const note = document.createElement('p');
  note.textContent = 'The distributed training panel is coming soon.';
  panel.node.append(heading, note);
  return panel;
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'kale-ext:plugin',
  description: 'Run a tagged notebook as a distributed Kubeflow Trainer job.',
  autoStart: true,
  activate: (app: JupyterFrontEnd) => {
    app.shell.add(createPanel(), 'left', { rank: 1000 });
    console.log('kale_ext is activated');
  }
};

export default plugin;
