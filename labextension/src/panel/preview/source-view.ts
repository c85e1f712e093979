import { Widget } from '@lumino/widgets';

/**
 * A notebook's compiled function as the job runs it, read-only: the text of
 * `POST compile`'s `source`, in the code font, selectable and searchable,
 * never editable (the notebook is what the user edits).
 */
export class SourceView extends Widget {
  constructor(options: SourceView.IOptions) {
    super();
    this.addClass('kale-ext-Source');
    this.notebook = options.notebook;
    const pre = document.createElement('pre');
    pre.className = 'kale-ext-Source-code';
    pre.tabIndex = 0;
    pre.setAttribute('aria-label', `Compiled function ${options.name}`);
    pre.setAttribute('aria-readonly', 'true');
    this.node.appendChild(pre);
    this._code = pre;
    this.setSource(options.name, options.source);
  }

  /** The notebook it was compiled from. */
  readonly notebook: string;

  /** Show `source` (the function `name`), in place of what was shown. */
  setSource(name: string, source: string): void {
    this._code.textContent = source;
    const file = this.notebook.split('/').pop() || this.notebook;
    this.title.label = `${name} (compiled, read-only)`;
    this.title.caption = `The function kale_ext compiled from ${this.notebook || 'the notebook'}: what the job runs. Edit the notebook to change it.`;
    this.node.dataset.function = name;
    this.node.dataset.notebook = file;
  }

  /** The text shown. */
  get source(): string {
    return this._code.textContent ?? '';
  }

  private _code: HTMLPreElement;
}

export namespace SourceView {
  export interface IOptions {
    name: string;
    source: string;
    notebook: string;
  }
}
