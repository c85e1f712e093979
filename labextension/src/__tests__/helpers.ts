/**
 * Helpers shared by the specs (this file holds no tests).
 */
import { ServerConnection } from '@jupyterlab/services';

import { emptyForm, IJobForm } from '../form/model';

/** The service's settings, as a JupyterHub user's server has them. */
export const SETTINGS = ServerConnection.makeSettings({
  baseUrl: 'http://localhost:8888/user/alice/'
});

/** Where the service's requests go with SETTINGS. */
export const BASE = 'http://localhost:8888/user/alice/kale-ext';

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

/**
 * The server as the service reaches it (`ServerConnection.makeRequest`, spied
 * on). Made in a `describe` block; every spy is restored after each test.
 */
export function fakeServer() {
  let spy: jest.SpyInstance | undefined;
  afterEach(() => {
    jest.restoreAllMocks();
    spy = undefined;
  });
  const server = {
    /** The spy on the requests (made on first use): answer or count them. */
    requests(): jest.SpyInstance {
      spy = spy ?? jest.spyOn(ServerConnection, 'makeRequest');
      return spy;
    },
    /** Answer the next requests with these responses, in turn. */
    respond(...responses: Response[]): void {
      const requests = server.requests();
      for (const r of responses) {
        requests.mockResolvedValueOnce(r);
      }
    },
    /** The `i`th request's URL and options. */
    call(i = 0): { url: string; init: RequestInit } {
      const [url, init] = server.requests().mock.calls[i];
      return { url, init };
    }
  };
  return server;
}

/**
 * The empty job form with `change` made.
 */
export function jobForm(change: Partial<IJobForm> = {}): IJobForm {
  return { ...emptyForm(), ...change };
}
