import type { Kale } from '../../types';

/**
 * The job's name, the same in the preview and at submit: the server makes
 * up a name (`<notebook>-<5 characters>`) when none is chosen, a new one at
 * each compile. The first one it makes is kept and sent with the next
 * compiles and the submit, so the name the preview shows stays the name the
 * job gets. A name the user types wins; a kept name the server refuses (the
 * runtime or the node count shortened the limit) is let go for a new one.
 */
export class JobNameReservation {
  /** The name kept, or null. */
  get name(): string | null {
    return this._name;
  }

  /**
   * The request with the kept name, unless it names a job itself.
   */
  apply(body: Kale.JobRequest): Kale.JobRequest {
    if (this._name && !body.options?.name) {
      return { ...body, options: { ...body.options, name: this._name } };
    }
    return body;
  }

  /**
   * Take what a compile answered (for a request without a name of the
   * user's). Returns true when the kept name was refused and let go: the
   * notebook should be checked again.
   */
  observe(result: Kale.ICompileResult): boolean {
    const refused = result.errors.some(e => e.field === 'name');
    if (refused && this._name) {
      this._name = null;
      return true;
    }
    if (!this._name && result.job_name) {
      this._name = result.job_name;
    }
    return false;
  }

  /**
   * Let the name go (it was submitted, or the notebook is another one).
   */
  release(): void {
    this._name = null;
  }

  private _name: string | null = null;
}
