import { describe, expect, it } from 'vitest';
import { ApiError, createApiClient, describeError, fieldMessages, problemFrom, waitSentence } from '../../dashboard/src/api.ts';

const envelope = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
const meta = { request_id: 'r', timestamp: '2026-01-01T00:00:00Z', trace_id: 't' };

function clientAnswering(reply: () => Response | Promise<Response>) {
  const calls: { url: string; init: RequestInit }[] = [];
  const api = createApiClient({
    fetch: async (url, init) => {
      calls.push({ url, init });
      return reply();
    },
    currentTeam: () => 'team-1',
  });
  return { api, calls };
}

describe("the console's API client", () => {
  it('calls /api/v1 on its own origin with the cookie (same-origin), the current team and JSON', async () => {
    const { api, calls } = clientAnswering(() => envelope(200, { data: { ok: true }, meta }));
    expect(await api.post('/projects/p1/promote', { deployment_id: 'd1' })).toEqual({ ok: true });
    expect(calls[0]!.url).toBe('/api/v1/projects/p1/promote');
    expect(calls[0]!.init).toMatchObject({ method: 'POST', credentials: 'same-origin', body: '{"deployment_id":"d1"}' });
    expect(calls[0]!.init.headers).toMatchObject({
      'x-team-id': 'team-1',
      'content-type': 'application/json',
      'x-platform-client': 'dashboard',
    });
  });

  it('sends no X-Team-Id when told the call is not about a team', async () => {
    const { api, calls } = clientAnswering(() => envelope(200, { data: {}, meta }));
    await api.get('/me', { team: null });
    expect(calls[0]!.init.headers).not.toHaveProperty('x-team-id');
  });

  it("turns an error envelope into the platform's sentence, its code and a sentence per field", async () => {
    const { api } = clientAnswering(() =>
      envelope(400, {
        code: 'VALIDATION_FAILED',
        error: 'The request is invalid.',
        details: {
          fields: [
            { field: 'project.name', message: 'The name must not be blank', code: 'custom' },
            { field: 'query.limit', message: 'Too big.' },
          ],
        },
        meta,
      }),
    );
    const error = await api.post('/uploads', {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      status: 400,
      code: 'VALIDATION_FAILED',
      message: 'The request is invalid.',
      fields: { 'project.name': 'The name must not be blank.', limit: 'Too big.' },
    });
  });

  it('adds how long to wait to a 429', async () => {
    const problem = await problemFrom(
      envelope(
        429,
        { code: 'SIGN_IN_LINK_LIMITED', error: 'Too many sign-in links requested.', details: null, meta },
        { 'retry-after': '1800' },
      ),
    );
    expect(problem.message).toBe('Too many sign-in links requested. Try again in 30 minutes.');
    expect(problem.retryAfter).toBe(1800);
    expect(waitSentence(20)).toBe('Try again in 20 seconds.');
  });

  it('never shows a raw reply: a non-envelope answer and a network failure become sentences', async () => {
    const html = await problemFrom(new Response('<html>Bad gateway</html>', { status: 502 }));
    expect(html).toMatchObject({ code: 'UNEXPECTED_REPLY', message: 'The platform could not answer (HTTP 502). Try again in a moment.' });
    const odd = await problemFrom(new Response('nope', { status: 418 }));
    expect(odd.message).toBe('The platform gave an answer the console does not understand (HTTP 418).');
    const { api } = clientAnswering(() => Promise.reject(new TypeError('Failed to fetch')));
    const offline = await api.get('/projects').catch((e: unknown) => e);
    expect(offline).toMatchObject({
      code: 'NETWORK_ERROR',
      message: 'The platform could not be reached. Check your connection and try again.',
    });
    expect(describeError(new Error('internal detail'))).toBe('Something went wrong in the console. Reload the page and try again.');
  });

  it('reads only well-formed field entries', () => {
    expect(fieldMessages(null)).toEqual({});
    expect(fieldMessages({ fields: 'x' })).toEqual({});
    expect(fieldMessages({ fields: [{ field: 'email', message: '' }, { nope: 1 }] })).toEqual({ email: 'This value is not accepted.' });
  });
});
