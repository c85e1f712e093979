import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import type { IDisposable } from '@lumino/disposable';
import { Signal } from '@lumino/signaling';

import { METADATA_KEY } from './notebook-io';

/**
 * Which notebook the panel works on: the tracker's current one, followed as
 * the user switches notebooks or closes one. Tells its owner when it binds
 * to another notebook, when that notebook's file is loaded, and when the
 * panel's metadata or the content change there.
 */
export class NotebookBinding implements IDisposable {
  constructor(options: NotebookBinding.IOptions) {
    this._tracker = options.tracker;
    this._callbacks = options;
    this._tracker.currentChanged.connect((_, panel) => this.bind(panel), this);
  }

  /** The bound notebook, or null. */
  get panel(): NotebookPanel | null {
    return this._panel;
  }

  /** Whether the bound notebook's file is loaded. */
  get ready(): boolean {
    return this._ready;
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  /**
   * Work on `panel` (or on none).
   */
  bind(panel: NotebookPanel | null): void {
    if (panel !== null && panel === this._panel) {
      return;
    }
    this._unbind();
    this._panel = panel;
    this._ready = false;
    if (panel) {
      panel.disposed.connect(this._onDisposed, this);
      void panel.context.ready.then(() => {
        if (this._panel !== panel || !panel.model) {
          return;
        }
        this._ready = true;
        panel.model.metadataChanged.connect(this._onMetadataChanged, this);
        panel.model.contentChanged.connect(this._onContentChanged, this);
        this._callbacks.ready(panel);
      });
    }
    this._callbacks.bound(panel);
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._unbind();
    Signal.clearData(this);
  }

  private _unbind(): void {
    const panel = this._panel;
    if (!panel) {
      return;
    }
    panel.disposed.disconnect(this._onDisposed, this);
    panel.model?.metadataChanged.disconnect(this._onMetadataChanged, this);
    panel.model?.contentChanged.disconnect(this._onContentChanged, this);
    this._panel = null;
    this._callbacks.unbound();
  }

  private _onDisposed(): void {
    this._unbind();
    const current = this._tracker.currentWidget;
    this.bind(current && !current.isDisposed ? current : null);
  }

  private _onMetadataChanged(_: unknown, change: { key: string }): void {
    if (change.key === METADATA_KEY) {
      this._callbacks.metadataChanged();
    }
  }

  private _onContentChanged(): void {
    this._callbacks.contentChanged();
  }

  private _tracker: INotebookTracker;
  private _callbacks: NotebookBinding.IOptions;
  private _panel: NotebookPanel | null = null;
  private _ready = false;
  private _disposed = false;
}

export namespace NotebookBinding {
  export interface IOptions {
    tracker: INotebookTracker;
    /** Bound to another notebook (or none); its file may not be loaded. */
    bound: (panel: NotebookPanel | null) => void;
    /** The bound notebook's file is loaded. */
    ready: (panel: NotebookPanel) => void;
    /** No longer bound to the notebook it was. */
    unbound: () => void;
    /** The panel's key in the notebook's metadata changed. */
    metadataChanged: () => void;
    /** The notebook's content changed. */
    contentChanged: () => void;
  }
}
