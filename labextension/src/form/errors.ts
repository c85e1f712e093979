/**
 * A problem with one field of the form, found as the user types by the
 * server's rules (the generated contract), or reported by the server's
 * compile (parameters, and what only the server knows).
 */
export interface IFieldError {
  /** The form field: `nodes`, `cpuLimit`, `env.2.name`, `parameters.lr`, ... */
  field: string;
  message: string;
}
