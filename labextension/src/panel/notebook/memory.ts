import type { KaleService } from '../../api';
import {
  IPanelValues,
  IRestoredField,
  fromStored,
  restoredFields,
  stillRestored,
  toStored,
  withNotebookValues
} from '../../form/restore';

/**
 * The panel's form kept on the server for the bound notebook (`GET`/`PUT
 * panel-state`), so that a reload restores exactly the values last shown:
 * the notebook's metadata follows the form too, but reaches the disk only
 * when the notebook is saved.
 *
 * Every change is sent at once, one request at a time (the last values
 * win); what a recalled state changes from the notebook's own values is
 * the {@link PanelMemory.note}, for the panel to show.
 */
export class PanelMemory {
  constructor(
    private _service: KaleService,
    private _changed: () => void
  ) {}

  /** What was restored that differs from the notebook on disk, or null. */
  get note(): PanelMemory.INote | null {
    return this._note;
  }

  /** The last save's failure ('' none): the values then live only here. */
  get error(): string {
    return this._error;
  }

  /** Bound to another notebook (or none): nothing is kept until recalled. */
  reset(): void {
    this._generation++;
    this._path = null;
    this._recalling = false;
    this._pending = null;
    this._last = null;
    this._setNote(null);
  }

  /**
   * The notebook at `path` is loaded and the form holds its own values
   * (`notebook`): the kept values, when they differ (the note then says
   * how), else null. A change made while asking wins over the kept state.
   */
  async recall(
    path: string,
    notebook: IPanelValues
  ): Promise<IPanelValues | null> {
    this.reset();
    const generation = this._generation;
    this._path = path;
    this._recalling = true;
    let record = null;
    try {
      record = await this._service.getPanelState(path);
    } catch (e) {
      this._setError(
        `The panel's last values could not be read: ${Private.message(e)}`
      );
    }
    if (generation !== this._generation) {
      return null; // bound to another notebook meanwhile
    }
    this._recalling = false;
    const kept = record ? fromStored(record.state) : null;
    if (kept) {
      this._last = JSON.stringify(toStored(kept)); // the server has it
    }
    if (this._pending !== null) {
      void this._flush(); // the user changed the form meanwhile: theirs wins
      return null;
    }
    const fields = kept ? restoredFields(notebook, kept) : [];
    if (!kept || fields.length === 0) {
      return null;
    }
    this._setNote({ fields, notebook, saved: record?.saved ?? null });
    return kept;
  }

  /**
   * The form now holds `values`: keep them for the bound notebook, at
   * `path` (its path now: a renamed notebook keeps its values).
   */
  remember(values: IPanelValues, path?: string): void {
    if (this._path === null) {
      return; // not recalled yet: the notebook's own values
    }
    this._follow(values);
    if (path !== undefined && path !== this._path) {
      this._path = path;
      this._last = null;
    }
    this._pending = JSON.stringify(toStored(values));
    if (!this._recalling) {
      void this._flush();
    }
  }

  /**
   * `current` with the fields the note lists set back to the notebook's
   * own values (a field edited since the restore stays as edited); null
   * without a note. The note is gone.
   */
  useNotebook(current: IPanelValues): IPanelValues | null {
    const note = this._note;
    this._setNote(null);
    if (!note) {
      return null;
    }
    const labels = note.fields.map(f => f.label);
    return withNotebookValues(current, note.notebook, labels);
  }

  /** Keep the restored values; the note is gone. */
  dismiss(): void {
    this._setNote(null);
  }

  /** Resolves once every change so far is saved (or failed). */
  async settled(): Promise<void> {
    while (this._saving) {
      await this._saving;
    }
  }

  private async _flush(): Promise<void> {
    if (this._saving || this._pending === null || this._path === null) {
      return;
    }
    const [path, text] = [this._path, this._pending];
    this._pending = null;
    if (text === this._last) {
      return;
    }
    const generation = this._generation;
    this._saving = this._service
      .savePanelState(path, JSON.parse(text))
      .then(() => {
        if (generation === this._generation) {
          this._last = text;
        }
        this._setError('');
      })
      .catch(e =>
        this._setError(
          `The panel's values could not be kept for a reload: ${Private.message(e)}`
        )
      );
    await this._saving;
    this._saving = null;
    if (generation === this._generation) {
      void this._flush(); // what changed meanwhile
    }
  }

  /**
   * The form now holds `values`: the note lists only the fields that still
   * hold their restored value, and leaves when none does.
   */
  private _follow(values: IPanelValues): void {
    const note = this._note;
    if (!note) {
      return;
    }
    const fields = stillRestored(note.fields, note.notebook, values);
    if (fields.length === 0) {
      this._setNote(null);
    } else if (JSON.stringify(fields) !== JSON.stringify(note.fields)) {
      this._setNote({ ...note, fields });
    }
  }

  private _setNote(note: PanelMemory.INote | null): void {
    if (note !== this._note) {
      this._note = note;
      this._changed();
    }
  }

  private _setError(error: string): void {
    if (error !== this._error) {
      this._error = error;
      this._changed();
    }
  }

  private _generation = 0;
  private _path: string | null = null;
  private _recalling = false;
  private _pending: string | null = null;
  private _last: string | null = null;
  private _saving: Promise<void> | null = null;
  private _note: PanelMemory.INote | null = null;
  private _error = '';
}

export namespace PanelMemory {
  /** What a restored form changes from the notebook on disk. */
  export interface INote {
    fields: IRestoredField[];
    /** The notebook's own values ("Use the notebook's values"). */
    notebook: IPanelValues;
    /** When the restored values were kept (UTC), or null. */
    saved: string | null;
  }
}

namespace Private {
  export function message(e: unknown): string {
    return e instanceof Error ? e.message : String(e);
  }
}
