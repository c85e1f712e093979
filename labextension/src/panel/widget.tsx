import { ReactWidget } from '@jupyterlab/ui-components';
import type { Message } from '@lumino/messaging';
import * as React from 'react';

import { useSignal } from '../hooks';
import type { PanelState } from './state';
import { PanelView } from './view';

/**
 * The id of the left-sidebar panel.
 */
export const PANEL_ID = 'kale-ext-panel';

/**
 * The left-sidebar panel, bound to the active notebook.
 */
export class KalePanel extends ReactWidget {
  constructor(readonly state: PanelState) {
    super();
    this.id = PANEL_ID;
    this.addClass('kale-ext-Panel');
    this.title.caption = 'kale_ext: distributed training';
  }

  protected render(): JSX.Element {
    return <PanelRoot state={this.state} />;
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this.state.setVisible(true);
  }

  protected onAfterHide(msg: Message): void {
    super.onAfterHide(msg);
    this.state.setVisible(false);
  }

  dispose(): void {
    if (!this.isDisposed) {
      this.state.dispose();
    }
    super.dispose();
  }
}

function PanelRoot(props: { state: PanelState }): JSX.Element {
  useSignal(props.state.stateChanged);
  return <PanelView state={props.state} />;
}
