import { ReactWidget } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';
import * as React from 'react';

import { emptyForm } from '../form/model';
import { DefaultsInfo, defaultsBySource } from '../panel/form/defaults';
import { ResourceFields } from '../panel/form/job-form';
import { defaultsResponse as defaults } from './fakes';
import { until } from './helpers';

describe('defaultsBySource', () => {
  it('lists only what is not built in, the highest layer first', () => {
    expect(
      defaultsBySource(
        defaults({
          runtime: ['site', 'server configuration'],
          memory: ['6Gi', 'JupyterLab settings'],
          nodes: [2, 'JupyterLab settings'],
          pip_index_urls: [
            ['https://pypi.example/simple', 'https://extra.example/simple'],
            'server configuration'
          ],
          gpu: [null, 'server configuration']
        })
      )
    ).toEqual([
      { source: 'JupyterLab settings', items: ['nodes 2', 'memory 6Gi'] },
      {
        source: 'server configuration',
        items: [
          'runtime site',
          'pip index https://pypi.example/simple + https://extra.example/simple',
          'GPUs none'
        ]
      }
    ]);
    expect(defaultsBySource(defaults())).toEqual([]);
  });
});

describe('DefaultsInfo', () => {
  let widget: Widget | undefined;

  afterEach(() => {
    widget?.dispose();
    widget = undefined;
  });

  async function render(
    props: React.ComponentProps<typeof DefaultsInfo>
  ): Promise<HTMLElement> {
    widget = ReactWidget.create(React.createElement(DefaultsInfo, props));
    Widget.attach(widget, document.body);
    return until(() =>
      widget!.node.querySelector<HTMLElement>('.kale-ext-Defaults')
    );
  }

  it('says which defaults were set where, and the button edits them', async () => {
    const onEdit = jest.fn();
    const line = await render({
      defaults: defaults({
        memory: ['6Gi', 'JupyterLab settings'],
        nodes: [2, 'JupyterLab settings'],
        runtime: ['site', 'server configuration']
      }),
      error: '',
      onEdit
    });
    expect(line.textContent).toBe(
      'Empty fields use the defaults: JupyterLab settings: nodes 2, memory 6Gi' +
        ' · server configuration: runtime site' +
        'Edit defaults'
    );
    const groups = [
      ...line.querySelectorAll<HTMLElement>('.kale-ext-Defaults-group')
    ].map(g => g.dataset.source);
    expect(groups).toEqual(['JupyterLab settings', 'server configuration']);
    expect(line.querySelector('[role="alert"]')).toBeNull();

    const button = [...line.querySelectorAll('button')].find(
      b => b.textContent === 'Edit defaults'
    )!;
    button.click();
    expect(onEdit).toHaveBeenCalledTimes(1);
  });

  it('says briefly when every default is built in', async () => {
    const line = await render({ defaults: defaults(), error: '' });
    expect(line.textContent).toBe('Empty fields use the built-in defaults.');
    expect(line.querySelector('button')).toBeNull(); // no editor to open
  });

  it("shows the server's message for an invalid setting", async () => {
    const message =
      "defaults.cpu: '4x' is not a Kubernetes quantity (set in the JupyterLab settings)";
    const onEdit = jest.fn();
    const line = await render({
      defaults: defaults({ memory: ['6Gi', 'JupyterLab settings'] }), // stale
      error: message,
      onEdit
    });
    const alert = line.querySelector<HTMLElement>('[role="alert"]')!;
    expect(alert.textContent).toBe(message);
    expect(alert.classList).toContain('kale-ext-Field-error');
    expect(line.textContent).not.toContain('6Gi');
    line.querySelector('button')!.click();
    expect(onEdit).toHaveBeenCalledTimes(1);
  });

  it('shows no defaults line until the defaults are loaded', async () => {
    // The line inside a host that also renders a marker, so the test knows
    // React has rendered before it looks for what must not be there.
    let props: React.ComponentProps<typeof DefaultsInfo> = {
      defaults: null,
      error: ''
    };
    class Host extends ReactWidget {
      render() {
        return React.createElement(
          'div',
          { className: 'host', 'data-loaded': String(props.defaults !== null) },
          React.createElement(DefaultsInfo, props)
        );
      }
    }
    const host = new Host();
    widget = host;
    Widget.attach(host, document.body);
    const root = await until(() =>
      host.node.querySelector<HTMLElement>('.host[data-loaded="false"]')
    );
    expect(root.querySelector('.kale-ext-Defaults')).toBeNull();
    expect(root.textContent).toBe(''); // not "built-in defaults" before it knows

    props = { defaults: defaults(), error: '' };
    host.update();
    const line = await until(() =>
      host.node.querySelector<HTMLElement>(
        '.host[data-loaded="true"] .kale-ext-Defaults'
      )
    );
    expect(line.textContent).toBe('Empty fields use the built-in defaults.');
  });
});

describe('ResourceFields', () => {
  it('names the default GPUs that choosing none gets', async () => {
    const labels = async (defaultGpu: number | string | null) => {
      const widget = ReactWidget.create(
        React.createElement(ResourceFields, {
          form: emptyForm(),
          errors: [],
          onChange: () => undefined,
          defaultGpu
        })
      );
      Widget.attach(widget, document.body);
      const option = await until(() =>
        widget.node.querySelector<HTMLOptionElement>('option[value="none"]')
      );
      const text = option.textContent;
      widget.dispose();
      return text;
    };
    expect(await labels(null)).toBe('None');
    expect(await labels(0)).toBe('None');
    expect(await labels(2)).toBe('Default (2)');
    expect(await labels('mig-1g.5gb')).toBe('Default (mig-1g.5gb)');
  });
});
