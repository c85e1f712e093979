/**
 * Rendering a React element as the panel does (a ReactWidget attached to
 * the document), for specs of the panel's views (this file holds no tests).
 */
import { ReactWidget } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';
import * as React from 'react';

import { until } from './helpers';

/**
 * Run `action` in React's act(): every update it causes is rendered before
 * this returns.
 */
export async function inAct(action: () => void | Promise<void>): Promise<void> {
  const scope = globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean };
  scope.IS_REACT_ACT_ENVIRONMENT = true;
  try {
    await React.act(async () => {
      await action();
    });
  } finally {
    scope.IS_REACT_ACT_ENVIRONMENT = false;
  }
}

/**
 * Render `element` and wait until it is on the page (or until `shown`).
 * Dispose of the widget to remove it.
 */
export async function render(
  element: React.ReactElement,
  shown: (node: HTMLElement) => boolean = node => node.childElementCount > 0
): Promise<Widget> {
  const widget = ReactWidget.create(element);
  await inAct(() => Widget.attach(widget, document.body));
  await until(() => shown(widget.node));
  return widget;
}
