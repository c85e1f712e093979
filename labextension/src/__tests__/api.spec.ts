import { ServerConnection } from '@jupyterlab/services';

import { requestAPI } from '../api';

const settings = ServerConnection.makeSettings({
  baseUrl: 'http://localhost:8888/user/alice/'
});

function mockResponse(body: string, init: ResponseInit): jest.SpyInstance {
  return jest
    .spyOn(ServerConnection, 'makeRequest')
    .mockResolvedValue(new Response(body || null, init));
}

async function rejection(
  promise: Promise<unknown>
): Promise<ServerConnection.ResponseError> {
  try {
    await promise;
  } catch (error) {
    return error as ServerConnection.ResponseError;
  }
  throw new Error('Expected the request to fail');
}

describe('requestAPI', () => {
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('calls <baseUrl>/kale-ext/<endPoint> and returns the parsed JSON', async () => {
    const makeRequest = mockResponse(JSON.stringify({ jobs: ['a', 'b'] }), {
      status: 200
    });
    const init = { method: 'POST', body: '{"name":"a"}' };

    const data = await requestAPI<{ jobs: string[] }>('jobs', init, settings);

    expect(data).toEqual({ jobs: ['a', 'b'] });
    expect(makeRequest).toHaveBeenCalledTimes(1);
    expect(makeRequest).toHaveBeenCalledWith(
      'http://localhost:8888/user/alice/kale-ext/jobs',
      init,
      settings
    );
  });

  it('joins nested endpoints without doubling slashes', async () => {
    const makeRequest = mockResponse('{}', { status: 200 });

    await requestAPI('jobs/train-1/logs', {}, settings);

    expect(makeRequest.mock.calls[0][0]).toBe(
      'http://localhost:8888/user/alice/kale-ext/jobs/train-1/logs'
    );
  });

  it('returns undefined for an empty successful body', async () => {
    mockResponse('', { status: 204 });

    await expect(
      requestAPI('jobs/a', { method: 'DELETE' }, settings)
    ).resolves.toBeUndefined();
  });

  it("throws the server's message on an error response", async () => {
    mockResponse(
      JSON.stringify({ message: 'Job "x" not found', reason: 'Not Found' }),
      { status: 404, statusText: 'Not Found' }
    );

    const error = await rejection(requestAPI('jobs/x', {}, settings));

    expect(error).toBeInstanceOf(ServerConnection.ResponseError);
    expect(error.message).toBe('Job "x" not found');
    expect(error.response.status).toBe(404);
  });

  it('falls back to the reason field', async () => {
    mockResponse(JSON.stringify({ message: '', reason: 'Bad Request' }), {
      status: 400
    });

    await expect(requestAPI('submit', {}, settings)).rejects.toThrow(
      /^Bad Request$/
    );
  });

  it('never puts an HTML error page in the message', async () => {
    mockResponse('<html><body><h1>404: Not Found</h1></body></html>', {
      status: 404,
      statusText: 'Not Found'
    });

    const error = await rejection(requestAPI('jobs', {}, settings));

    expect(error.message).toBe('kale-ext request failed: 404 Not Found');
    expect(error.message).not.toContain('<');
  });

  it('rejects a successful response that is not JSON', async () => {
    mockResponse('<html></html>', { status: 200 });

    await expect(requestAPI('jobs', {}, settings)).rejects.toThrow(
      'Invalid JSON in the response from kale-ext/jobs'
    );
  });
});
