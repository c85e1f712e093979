import type { Cell } from '@jupyterlab/cells';
import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import type { IDisposable } from '@lumino/disposable';

import type { Kale } from '../types';
import { cellTags, offeredOn, roleTags, tagClass } from './tags';

/**
 * The class of a cell that carries a kale_ext tag.
 */
export const TAGGED_CLASS = 'kale-ext-mod-tagged';

/**
 * Marks every cell of every notebook with its kale_ext tags: the classes
 * `kale-ext-mod-tagged` and `kale-ext-tag-<tag>`, and the tags in a
 * `data-kale-ext-tags` attribute that the stylesheet shows as a badge. The
 * cells' `tags` metadata drives them, whoever changes it.
 */
export class CellTagBadges implements IDisposable {
  constructor(private _tracker: INotebookTracker) {
    _tracker.widgetAdded.connect(this._onAdded, this);
    _tracker.forEach(panel => this._watch(panel));
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  /**
   * The tag grammar (from `GET tags`): the tags that give a role are marked.
   */
  setTags(grammar: Kale.ITag[]): void {
    const tags = roleTags(grammar);
    this._offered = tags.map(t => t.tag);
    this._roles = new Map(tags.map(t => [t.tag, t.role ?? '']));
    this._tracker.forEach(panel => this._update(panel));
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._tracker.widgetAdded.disconnect(this._onAdded, this);
    this._tracker.forEach(panel => {
      for (const cell of panel.content.widgets) {
        this._mark(cell, []);
      }
    });
  }

  private _onAdded(_: INotebookTracker, panel: NotebookPanel): void {
    this._watch(panel);
  }

  private _watch(panel: NotebookPanel): void {
    const update = () => this._schedule(panel);
    const watched = new WeakSet<object>();
    const connect = () => {
      const model = panel.content.model;
      if (!model) {
        return;
      }
      for (const cell of model.cells) {
        if (!watched.has(cell)) {
          watched.add(cell);
          cell.metadataChanged.connect(update);
        }
      }
      update();
    };
    panel.content.modelChanged.connect(() => {
      panel.content.model?.cells.changed.connect(connect);
      connect();
    });
    panel.content.model?.cells.changed.connect(connect);
    void panel.context.ready.then(connect);
    connect();
  }

  /**
   * Update once per turn, however many cells changed.
   */
  private _schedule(panel: NotebookPanel): void {
    if (this._pending.has(panel)) {
      return;
    }
    this._pending.add(panel);
    void Promise.resolve().then(() => {
      this._pending.delete(panel);
      if (!this._disposed && !panel.isDisposed) {
        this._update(panel);
      }
    });
  }

  private _update(panel: NotebookPanel): void {
    for (const cell of panel.content.widgets) {
      const tags = offeredOn(
        cellTags(cell.model.getMetadata('tags')),
        this._offered
      );
      this._mark(cell, tags);
    }
  }

  private _mark(cell: Cell, tags: string[]): void {
    const node = cell.node;
    for (const name of [...node.classList]) {
      if (
        name.startsWith('kale-ext-tag-') ||
        name.startsWith('kale-ext-role-')
      ) {
        node.classList.remove(name);
      }
    }
    node.classList.toggle(TAGGED_CLASS, tags.length > 0);
    if (tags.length === 0) {
      delete node.dataset.kaleExtTags;
      return;
    }
    node.dataset.kaleExtTags = tags.join(' ');
    for (const tag of tags) {
      node.classList.add(tagClass(tag));
      const role = this._roles.get(tag);
      if (role) {
        node.classList.add(`kale-ext-role-${role}`);
      }
    }
  }

  private _disposed = false;
  private _offered: string[] = [];
  private _roles = new Map<string, string>();
  private _pending = new Set<NotebookPanel>();
}
