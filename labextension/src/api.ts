import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

/**
 * The URL namespace of the kale_ext server extension.
 */
export const API_NAMESPACE = 'kale-ext';

/**
 * Call the kale_ext server extension and return its JSON body.
 *
 * @param endPoint Path below `<baseUrl>/kale-ext/`, e.g. `jobs/my-job`.
 * @param init Fetch options (method, body, headers).
 * @param settings Server connection settings; the page's settings by default.
 * @returns The parsed JSON body (`undefined` for an empty body).
 * @throws {ServerConnection.ResponseError} On a non-OK response. Its message is
 *   the server's `message` (or `reason`) field, else the HTTP status; never the
 *   body of an HTML error page.
 */
export async function requestAPI<T>(
  endPoint: string,
  init: RequestInit = {},
  settings: ServerConnection.ISettings = ServerConnection.makeSettings()
): Promise<T> {
  const url = URLExt.join(settings.baseUrl, API_NAMESPACE, endPoint);
  const response = await ServerConnection.makeRequest(url, init, settings);
  const text = await response.text();
  let data: unknown;
  let isJSON = true;
  if (text.length > 0) {
    try {
      data = JSON.parse(text);
    } catch {
      // Not JSON: an HTML error page or a proxy's plain-text answer.
      isJSON = false;
    }
  }

  if (!response.ok) {
    throw new ServerConnection.ResponseError(
      response,
      Private.errorMessage(response, data)
    );
  }
  if (!isJSON) {
    throw new ServerConnection.ResponseError(
      response,
      `Invalid JSON in the response from ${API_NAMESPACE}/${endPoint}`
    );
  }
  return data as T;
}

namespace Private {
  /**
   * The message to show for a failed response.
   */
  export function errorMessage(response: Response, data: unknown): string {
    if (typeof data === 'object' && data !== null) {
      const { message, reason } = data as Record<string, unknown>;
      for (const field of [message, reason]) {
        if (typeof field === 'string' && field.length > 0) {
          return field;
        }
      }
    }
    const status = `${response.status} ${response.statusText}`.trim();
    return `${API_NAMESPACE} request failed: ${status}`;
  }
}
