import { ReactWidget } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';
import * as React from 'react';

import { KaleService } from '../api';
import { RuntimePackages } from '../panel/form/runtime-packages';
import { BASE, fakeServer, json, SETTINGS, until } from './helpers';

const URL = `${BASE}/runtimes/torch/packages`;

/**
 * Type into a React-controlled input.
 */
function type(input: HTMLInputElement, text: string): void {
  const setter = Object.getOwnPropertyDescriptor(
    HTMLInputElement.prototype,
    'value'
  )!.set!;
  setter.call(input, text);
  input.dispatchEvent(new Event('input', { bubbles: true }));
}

function rows(node: HTMLElement): string[] {
  return [...node.querySelectorAll('li')].map(li =>
    (li.textContent ?? '').trim()
  );
}

describe('RuntimePackages', () => {
  let widget: Widget | undefined;
  const server = fakeServer();
  const { respond } = server;

  afterEach(() => {
    widget?.dispose();
    widget = undefined;
  });

  /**
   * The disclosure for runtime `torch`, attached and opened.
   */
  async function open(): Promise<HTMLElement> {
    widget = ReactWidget.create(
      React.createElement(RuntimePackages, {
        service: new KaleService(SETTINGS),
        runtime: 'torch'
      })
    );
    Widget.attach(widget, document.body);
    const summary = await until(() =>
      widget!.node.querySelector<HTMLElement>('summary')
    );
    // a value before it is opened: what opening it does
    expect(summary.textContent).toBe(
      'Packagesinstalled in torch: open to list'
    );
    expect(server.requests()).not.toHaveBeenCalled(); // lazily: only when opened
    summary.click();
    return widget.node;
  }

  it('loads the list when opened, then filters it by name', async () => {
    respond(
      json({
        runtime: 'torch',
        packages: { numpy: '2.3.1', 'scikit-learn': '1.7.0', torch: '2.13.0' },
        source: 'cache'
      })
    );
    const node = await open();
    await until(() => node.querySelector('li'));
    expect(server.requests()).toHaveBeenCalledTimes(1);
    expect(server.requests().mock.calls[0][0]).toBe(URL);
    expect(rows(node)).toEqual([
      'numpy 2.3.1',
      'scikit-learn 1.7.0',
      'torch 2.13.0'
    ]);
    expect(node.querySelector('summary .kale-ext-Count')?.textContent).toBe(
      '3'
    );
    expect(node.textContent).toContain('3 packages');
    expect(node.textContent).toContain('from an earlier probe of this image');

    const filter = node.querySelector<HTMLInputElement>(
      'input[aria-label="Filter packages"]'
    )!;
    type(filter, 'Scikit_L'); // as the server names it: scikit-learn
    await until(() => (rows(node).length === 1 ? true : null));
    expect(rows(node)).toEqual(['scikit-learn 1.7.0']);
    expect(node.textContent).toContain('1 of 3 packages');

    type(filter, 'tensorflow');
    await until(() => (rows(node).length === 0 ? true : null));
    expect(node.textContent).toContain('No package matches “tensorflow”.');
    expect(server.requests()).toHaveBeenCalledTimes(1); // filtering asks nothing
  });

  it('offers a probe when the list is unknown, and shows its result', async () => {
    respond(
      json({ runtime: 'torch', packages: null, source: null }),
      json({ runtime: 'torch', packages: { torch: '2.13.0' }, source: 'probe' })
    );
    const node = await open();
    const button = await until(() =>
      [...node.querySelectorAll('button')].find(
        b => b.textContent === 'Probe the runtime'
      )
    );
    expect(node.textContent).toContain(
      'The packages of torch are not known yet.'
    );
    const note = node.querySelector(
      `#${CSS.escape(button.getAttribute('aria-describedby')!)}`
    );
    expect(note?.textContent).toContain('This starts a pod on the runtime');
    expect(node.querySelector('li')).toBeNull();

    button.click();
    await until(() => node.querySelector('li'));
    expect(server.requests().mock.calls[1][0]).toBe(`${URL}?probe=1`);
    expect(rows(node)).toEqual(['torch 2.13.0']);
    expect(node.textContent).toContain('from a probe just now');
  });

  it('shows that a probe is running', async () => {
    let answer: (r: Response) => void = () => undefined;
    respond(json({ runtime: 'torch', packages: null, source: null }));
    server
      .requests()
      .mockImplementationOnce(
        () => new Promise<Response>(resolve => (answer = resolve))
      );
    const node = await open();
    const button = await until(() =>
      [...node.querySelectorAll('button')].find(
        b => b.textContent === 'Probe the runtime'
      )
    );
    button.click();
    const status = await until(() =>
      node.querySelector('[role="status"]')?.textContent?.includes('Probing')
        ? node.querySelector('[role="status"]')
        : null
    );
    expect(status!.textContent).toContain('This can take a few minutes');
    answer(json({ runtime: 'torch', packages: {}, source: 'probe' }));
    await until(() => (node.textContent?.includes('0 packages') ? true : null));
  });

  it("shows the server's error message, never a stack trace", async () => {
    const message =
      "runtime 'torch' not found in the cluster or namespace team (available: none)";
    respond(
      json({ message, status: 404, reason: 'NotFound' }, 404),
      json({ runtime: 'torch', packages: { torch: '2.13.0' }, source: 'cache' })
    );
    const node = await open();
    const alert = await until(() => node.querySelector('[role="alert"]'));
    expect(alert.firstElementChild?.textContent).toBe(message);
    expect(alert.textContent).not.toMatch(/at .*\.(ts|js)|Error:/);

    // "Try again" asks once more
    const retry = [...alert.querySelectorAll('button')].find(
      b => b.textContent === 'Try again'
    )!;
    retry.click();
    await until(() => node.querySelector('li'));
    expect(node.querySelector('[role="alert"]')).toBeNull();
    expect(rows(node)).toEqual(['torch 2.13.0']);
  });
});
