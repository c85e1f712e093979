/**
 * Helpers shared by the specs (this file holds no tests).
 */

/**
 * Wait until `check` returns something truthy (React renders and the
 * service answers asynchronously), and return it; fail after `timeout` ms.
 */
export async function until<T>(
  check: () => T | null | undefined | false,
  timeout = 5000
): Promise<T> {
  const start = Date.now();
  for (;;) {
    const value = check();
    if (value) {
      return value;
    }
    if (Date.now() - start > timeout) {
      throw new Error('timed out waiting for a condition');
    }
    await new Promise(resolve => setTimeout(resolve, 2));
  }
}

/**
 * A JSON response, as the server sends it.
 */
export function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status });
}
