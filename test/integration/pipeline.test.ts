import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD_ORIGIN, makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';

let platform: TestPlatform;
let m: Awaited<ReturnType<typeof makeTeamWithRoles>>;

beforeAll(async () => {
  platform = await startTestPlatform();
  m = await makeTeamWithRoles();
});
afterAll(() => platform?.stop());

describe('meta ids', () => {
  it('takes trace_id from a valid W3C traceparent and a request_id from the request context', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const reply = await platform.api('GET', '/api/v1/team/profile', {
      token: m.owner.token,
      headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    });
    expect(reply.status).toBe(200);
    expect(reply.body.meta.trace_id).toBe(traceId);
    expect(reply.body.meta.request_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it.each([
    ['garbage', 'not-a-traceparent'],
    ['all-zero trace id', '00-00000000000000000000000000000000-00f067aa0ba902b7-01'],
    ['version ff', 'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'],
    ['upper-case hex', '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01'],
  ])('generates a fresh trace_id for an invalid traceparent (%s), also on errors', async (_name, traceparent) => {
    const reply = await platform.api('GET', '/api/v1/team/profile', { headers: { traceparent } });
    expect(reply.status).toBe(401);
    expect(reply.body.meta.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(reply.body.meta.trace_id).not.toBe('4bf92f3577b34da6a3ce929d0e0e4736');
  });
});

describe('request bodies', () => {
  it('400 INVALID_JSON for malformed JSON, and nothing changes', async () => {
    const reply = await platform.api('PATCH', '/api/v1/team/profile', {
      token: m.owner.token,
      rawBody: '{"name": "x"',
      headers: { 'content-type': 'application/json' },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe('INVALID_JSON');
    expect(reply.body.error).toBe('The request body is not valid JSON.');
    const after = await platform.api('GET', '/api/v1/team/profile', { token: m.owner.token });
    expect(after.body.data.name).toBe(m.team.name);
  });

  it('415 UNSUPPORTED_MEDIA_TYPE for a body that is not JSON', async () => {
    const reply = await platform.api('PATCH', '/api/v1/team/profile', {
      token: m.owner.token,
      rawBody: 'name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(reply.status).toBe(415);
    expect(reply.body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('413 PAYLOAD_TOO_LARGE for a JSON body over 1 MiB', async () => {
    const reply = await platform.api('PATCH', '/api/v1/team/profile', {
      token: m.owner.token,
      body: { name: 'x'.repeat(1024 * 1024 + 10) },
    });
    expect(reply.status).toBe(413);
    expect(reply.body.code).toBe('PAYLOAD_TOO_LARGE');
    expect(reply.body.details).toEqual({ max_bytes: 1048576 });
  });

  it('413 envelope for a body over the 10 MB API Gateway limit', async () => {
    const reply = await platform.api('PATCH', '/api/v1/team/profile', {
      token: m.owner.token,
      rawBody: Buffer.alloc(10 * 1024 * 1024 + 1, 0x20),
      headers: { 'content-type': 'application/json' },
    });
    expect(reply.status).toBe(413);
    expect(reply.body.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('400 VALIDATION_FAILED names unknown fields too', async () => {
    const reply = await platform.api('PATCH', '/api/v1/team/profile', { token: m.owner.token, body: { colour: 'red' } });
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe('VALIDATION_FAILED');
    expect(reply.body.details.fields.length).toBeGreaterThan(0);
  });
});

describe('CORS for the dashboard', () => {
  it('echoes an allowed origin with credentials on replies and errors', async () => {
    const ok = await platform.api('GET', '/api/v1/team/profile', { token: m.owner.token, headers: { origin: DASHBOARD_ORIGIN } });
    expect(ok.headers.get('access-control-allow-origin')).toBe(DASHBOARD_ORIGIN);
    expect(ok.headers.get('access-control-allow-credentials')).toBe('true');
    const denied = await platform.api('GET', '/api/v1/team/profile', { headers: { origin: DASHBOARD_ORIGIN } });
    expect(denied.status).toBe(401);
    expect(denied.headers.get('access-control-allow-origin')).toBe(DASHBOARD_ORIGIN);
  });

  it('gives no allow-origin to an origin not on the list', async () => {
    const reply = await platform.api('GET', '/api/v1/team/profile', { token: m.owner.token, headers: { origin: 'https://evil.example' } });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('answers a preflight for an allowed origin with 204 and the allowed methods', async () => {
    const reply = await platform.api('OPTIONS', '/api/v1/team/profile', {
      headers: {
        origin: DASHBOARD_ORIGIN,
        'access-control-request-method': 'PATCH',
        'access-control-request-headers': 'authorization, content-type',
      },
    });
    expect(reply.status).toBe(204);
    expect(reply.headers.get('access-control-allow-origin')).toBe(DASHBOARD_ORIGIN);
    expect(reply.headers.get('access-control-allow-methods')).toContain('PATCH');
    expect(reply.headers.get('access-control-allow-headers')).toBe('authorization, content-type');
  });
});

describe('revoked credentials', () => {
  it('401 for a revoked session', async () => {
    const { revokeCredential } = await import('../../lib/identity/credential-records.ts');
    const { makeUser } = await import('../support/platform.ts');
    const actor = await makeUser();
    await revokeCredential(actor.token);
    const reply = await platform.api('GET', '/api/v1/teams/x/profile', { token: actor.token });
    expect(reply.status).toBe(401);
    expect(reply.body.code).toBe('UNAUTHENTICATED');
  });
});

describe('a document answered as is', () => {
  // Also in the synthesized mode: the JWKS route's Lambda reads the forge signing key from Secrets Manager.
  it('GET /.well-known/jwks.json: the forge tokens public keys, public, no envelope (docs/builds.md, "Forge tokens")', async () => {
    const reply = await platform.api('GET', '/.well-known/jwks.json');
    expect(reply.status, reply.text).toBe(200);
    expect(reply.headers.get('content-type')).toBe('application/jwk-set+json');
    expect(reply.body.meta).toBeUndefined();
    expect(reply.body.keys).toEqual([
      expect.objectContaining({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', kid: expect.any(String) }),
    ]);
    expect(JSON.stringify(reply.body)).not.toContain('"d"');
  });
});
