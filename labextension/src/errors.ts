/**
 * What a failure says to a user: an error's message (the server's, for a
 * {@link KaleAPIError}), or the value itself in words.
 */
export function errorMessage(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason);
}
