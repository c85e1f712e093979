import type { INotebookModel } from '@jupyterlab/notebook';

/**
 * The parts of a Yjs UndoManager and type this module uses.
 */
interface IUndoManager {
  addToScope(type: object): void;
  captureTransaction: (transaction: ITransaction) => boolean;
  stopCapturing(): void;
}

interface ITransaction {
  changedParentTypes: Map<object, unknown>;
  origin: unknown;
}

/**
 * The part of a notebook's shared model that makes a change a step of the
 * notebook's Undo.
 */
export interface ITransactor {
  transact(f: () => void, undoable?: boolean): void;
}

/**
 * Make `change` one step of the notebook's Undo (Edit menu, `z` in command
 * mode), a step of its own: the undo history merges the changes made within
 * 500 ms of each other into one step, so that two role changes made in a
 * quick succession would be taken back by one Undo. A new step starts
 * before the change and another after it.
 */
export function undoableStep(notebook: ITransactor, change: () => void): void {
  const manager = (notebook as { undoManager?: Partial<IUndoManager> | null })
    .undoManager;
  const stop = () => {
    if (typeof manager?.stopCapturing === 'function') {
      manager.stopCapturing();
    }
  };
  stop();
  notebook.transact(change, true);
  stop();
}

const patched = new WeakSet<object>();
let writing = false;

/**
 * Change the notebook's metadata so that the notebook's Undo (Edit menu,
 * `z` in command mode) reverts the change.
 *
 * JupyterLab's undo history tracks the cells only. This adds the notebook
 * metadata to it for the writes made through here, and for no other
 * (a kernel's `language_info`, another extension's keys stay out of it).
 */
export function undoableMetadataChange(
  model: INotebookModel,
  change: () => void
): void {
  const shared = model.sharedModel as unknown as {
    undoManager?: IUndoManager | null;
    ymeta?: object;
  };
  const manager = shared.undoManager;
  const ymeta = shared.ymeta;
  if (
    manager &&
    ymeta &&
    typeof manager.addToScope === 'function' &&
    typeof manager.captureTransaction === 'function' &&
    !patched.has(manager)
  ) {
    patched.add(manager);
    const capture = manager.captureTransaction;
    // Capture as before, except metadata-only changes made elsewhere; undo
    // and redo themselves (the manager's own transactions) are captured.
    manager.captureTransaction = transaction =>
      capture(transaction) &&
      (writing ||
        transaction.origin === manager ||
        !onlyUnder(transaction, ymeta));
    manager.addToScope(ymeta);
  }
  writing = true;
  try {
    change();
  } finally {
    writing = false;
  }
}

/**
 * Whether a transaction changed nothing but `root` and what is inside it.
 */
function onlyUnder(transaction: ITransaction, root: object): boolean {
  for (const type of transaction.changedParentTypes.keys()) {
    let t: { parent?: unknown } | null = type as { parent?: unknown };
    while (t && t !== root) {
      t = (t.parent as { parent?: unknown } | null | undefined) ?? null;
    }
    if (t !== root) {
      return false;
    }
  }
  return true;
}
