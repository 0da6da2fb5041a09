import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '../../lib/aws/clients.ts';
import { config } from '../../lib/config.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { expectEnvelopeError as expectError } from '../support/envelope.ts';

let platform: TestPlatform;
let m: Awaited<ReturnType<typeof makeTeamWithRoles>>;
let idp: Server;
let origin: string;
const hits: string[] = [];

/** Discovery documents shaped like the ones Keycloak, authentik and a generic provider serve. */
function documents(o: string): Record<string, unknown> {
  const kc = `${o}/realms/acme`;
  const ak = `${o}/application/o`;
  return {
    '/realms/acme': {
      issuer: kc,
      authorization_endpoint: `${kc}/protocol/openid-connect/auth`,
      token_endpoint: `${kc}/protocol/openid-connect/token`,
      introspection_endpoint: `${kc}/protocol/openid-connect/token/introspect`,
      userinfo_endpoint: `${kc}/protocol/openid-connect/userinfo`,
      end_session_endpoint: `${kc}/protocol/openid-connect/logout`,
      frontchannel_logout_session_supported: true,
      jwks_uri: `${kc}/protocol/openid-connect/certs`,
      check_session_iframe: `${kc}/protocol/openid-connect/login-status-iframe.html`,
      grant_types_supported: ['authorization_code', 'implicit', 'refresh_token', 'password', 'client_credentials'],
      response_types_supported: ['code', 'none', 'id_token', 'token', 'id_token token', 'code id_token'],
      subject_types_supported: ['public', 'pairwise'],
      id_token_signing_alg_values_supported: [
        'PS384',
        'ES384',
        'RS384',
        'HS256',
        'HS512',
        'ES256',
        'RS256',
        'HS384',
        'ES512',
        'PS256',
        'PS512',
        'RS512',
      ],
      code_challenge_methods_supported: ['plain', 'S256'],
      mtls_endpoint_aliases: { token_endpoint: `${kc}/protocol/openid-connect/token` },
    },
    '/application/o/acme': {
      issuer: `${ak}/acme/`,
      authorization_endpoint: `${ak}/authorize/`,
      token_endpoint: `${ak}/token/`,
      userinfo_endpoint: `${ak}/userinfo/`,
      end_session_endpoint: `${ak}/acme/end-session/`,
      introspection_endpoint: `${ak}/introspect/`,
      revocation_endpoint: `${ak}/revoke/`,
      device_authorization_endpoint: `${ak}/device/`,
      response_types_supported: ['code', 'id_token', 'id_token token', 'code token', 'code id_token', 'code id_token token'],
      response_modes_supported: ['query', 'fragment', 'form_post'],
      jwks_uri: `${ak}/acme/jwks/`,
      grant_types_supported: ['authorization_code', 'refresh_token', 'implicit', 'client_credentials', 'password'],
      id_token_signing_alg_values_supported: ['RS256'],
      subject_types_supported: ['public'],
      token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'],
      claims_supported: [
        'sub',
        'iss',
        'aud',
        'exp',
        'iat',
        'auth_time',
        'acr',
        'amr',
        'nonce',
        'email',
        'email_verified',
        'name',
        'given_name',
        'preferred_username',
        'nickname',
        'groups',
      ],
      request_parameter_supported: false,
      code_challenge_methods_supported: ['plain', 'S256'],
    },
    // A minimal provider: no userinfo, shared-secret ID tokens only, no PKCE S256, no end_session.
    '/generic': {
      issuer: `${o}/generic`,
      authorization_endpoint: `${o}/generic/oauth2/authorize`,
      token_endpoint: `${o}/generic/oauth2/token`,
      jwks_uri: `${o}/generic/oauth2/keys`,
      response_types_supported: ['code'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['HS256'],
      code_challenge_methods_supported: ['plain'],
    },
    '/mismatch': {
      issuer: 'https://login.other.example/tenant',
      authorization_endpoint: `${o}/mismatch/authorize`,
      token_endpoint: `${o}/mismatch/token`,
      jwks_uri: `${o}/mismatch/keys`,
    },
    '/incomplete': { issuer: `${o}/incomplete`, authorization_endpoint: `${o}/incomplete/authorize` },
    '/no-issuer': { authorization_endpoint: 'a', token_endpoint: 'b', jwks_uri: 'c' },
  };
}

beforeAll(async () => {
  idp = createServer((req, res) => {
    hits.push(req.url ?? '');
    const path = (req.url ?? '').replace(/\/\.well-known\/openid-configuration$/, '');
    const docs = documents(origin);
    if (!(req.url ?? '').endsWith('/.well-known/openid-configuration')) return res.writeHead(404).end();
    if (path in docs) return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(docs[path]));
    switch (path) {
      case '/not-json':
        return res.writeHead(200, { 'content-type': 'text/html' }).end('<html>login</html>');
      case '/array':
        return res.writeHead(200, { 'content-type': 'application/json' }).end('[]');
      case '/status-500':
        return res.writeHead(500).end('oops');
      case '/redirect':
        return res.writeHead(302, { location: `${origin}/realms/acme/.well-known/openid-configuration` }).end();
      case '/big-declared':
        return res
          .writeHead(200, { 'content-type': 'application/json', 'content-length': String(300 * 1024) })
          .end(`"${'x'.repeat(300 * 1024 - 2)}"`);
      case '/big-chunked':
        res.writeHead(200, { 'content-type': 'application/json' });
        for (let i = 0; i < 30; i++) res.write('x'.repeat(10 * 1024));
        return res.end();
      case '/silent':
        return; // never answers: the fetch budget ends it
      default:
        return res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;
  platform = await startTestPlatform();
  m = await makeTeamWithRoles('Single Sign On Co');
});
afterAll(async () => {
  idp?.closeAllConnections();
  await new Promise((resolve) => idp?.close(resolve));
  await platform?.stop();
});

const discover = (body: unknown, token = m.admin.token, headers: Record<string, string> = {}) =>
  platform.api('POST', '/api/v1/team/sso/discover', { token, body, headers });

describe('POST /api/v1/team/sso/discover: providers', () => {
  it('Keycloak: every field of the discovery result', async () => {
    const reply = await discover({ issuer: `${origin}/realms/acme` });
    expect(reply.status).toBe(200);
    expect(reply.body.data).toEqual({
      issuer: `${origin}/realms/acme`,
      provider: 'keycloak',
      authorization_endpoint: `${origin}/realms/acme/protocol/openid-connect/auth`,
      token_endpoint: `${origin}/realms/acme/protocol/openid-connect/token`,
      jwks_uri: `${origin}/realms/acme/protocol/openid-connect/certs`,
      userinfo_endpoint: `${origin}/realms/acme/protocol/openid-connect/userinfo`,
      redirect_uri: `${platform.baseUrl}/api/v1/auth/sso/callback`,
      recommended_is_id_token_mapping: false,
      suggested_issuer: '',
      suggested_name: 'Keycloak (acme)',
      warnings: [],
    });
  });

  it('Keycloak typed with a trailing slash: the canonical issuer and a suggestion', async () => {
    const reply = await discover({ issuer: `  ${origin}/realms/acme/  ` });
    expect(reply.status).toBe(200);
    expect(reply.body.data.issuer).toBe(`${origin}/realms/acme`);
    expect(reply.body.data.suggested_issuer).toBe(`${origin}/realms/acme`);
    expect(hits.at(-1)).toBe('/realms/acme/.well-known/openid-configuration');
  });

  it('authentik typed without its trailing slash: suggested_issuer carries it', async () => {
    const reply = await discover({ issuer: `${origin}/application/o/acme` });
    expect(reply.status).toBe(200);
    expect(reply.body.data).toEqual({
      issuer: `${origin}/application/o/acme/`,
      provider: 'authentik',
      authorization_endpoint: `${origin}/application/o/authorize/`,
      token_endpoint: `${origin}/application/o/token/`,
      jwks_uri: `${origin}/application/o/acme/jwks/`,
      userinfo_endpoint: `${origin}/application/o/userinfo/`,
      redirect_uri: `${platform.baseUrl}/api/v1/auth/sso/callback`,
      recommended_is_id_token_mapping: false,
      suggested_issuer: `${origin}/application/o/acme/`,
      suggested_name: 'authentik',
      warnings: [],
    });
    const exact = await discover({ issuer: `${origin}/application/o/acme/` });
    expect(exact.body.data.suggested_issuer).toBe('');
  });

  it('a generic provider: generic_oidc, named by host, ID-token mapping recommended, with warnings', async () => {
    const reply = await discover({ issuer: `${origin}/generic` });
    expect(reply.status).toBe(200);
    const docs = config.docsBaseUrl();
    expect(reply.body.data).toEqual({
      issuer: `${origin}/generic`,
      provider: 'generic_oidc',
      authorization_endpoint: `${origin}/generic/oauth2/authorize`,
      token_endpoint: `${origin}/generic/oauth2/token`,
      jwks_uri: `${origin}/generic/oauth2/keys`,
      userinfo_endpoint: '',
      redirect_uri: `${platform.baseUrl}/api/v1/auth/sso/callback`,
      recommended_is_id_token_mapping: true,
      suggested_issuer: '',
      suggested_name: '127.0.0.1',
      warnings: [
        {
          code: 'SSO_NO_USERINFO_ENDPOINT',
          docs_url: `${docs}/integrations#sso-no-userinfo-endpoint`,
          message:
            'The provider has no userinfo endpoint; e-mail and name will be read from the ID token, so make sure the provider puts them there.',
        },
        {
          code: 'SSO_WEAK_ID_TOKEN_SIGNING',
          docs_url: `${docs}/integrations#sso-weak-id-token-signing`,
          message:
            'The provider signs ID tokens only with none or a shared secret (HS*); configure an asymmetric algorithm such as RS256 or ES256.',
        },
        {
          code: 'SSO_NO_PKCE_S256',
          docs_url: `${docs}/integrations#sso-no-pkce-s256`,
          message: 'The provider does not advertise PKCE with S256; sign-in works, with less protection of the code exchange.',
        },
        {
          code: 'SSO_NO_END_SESSION_ENDPOINT',
          docs_url: `${docs}/integrations#sso-no-end-session-endpoint`,
          message: 'The provider has no end_session_endpoint; signing out of the platform will not sign the person out of the provider.',
        },
      ],
    });
  });

  it('writes nothing: the table holds the same items before and after', async () => {
    // Every item that names the team, the caller or the provider, whole. Not a count of the whole table: the worker's
    // platform is shared, and its sweeps remove other files' expired items at any moment.
    const ours = async () => {
      const found: string[] = [];
      let start: Record<string, unknown> | undefined;
      do {
        const page = await dynamo().send(new ScanCommand({ TableName: config.tableName(), ExclusiveStartKey: start }));
        for (const item of page.Items ?? []) {
          const text = JSON.stringify(item);
          if (text.includes(m.team.id) || text.includes(m.admin.user.user_id) || text.includes(origin)) found.push(text);
        }
        start = page.LastEvaluatedKey;
      } while (start);
      return found.sort();
    };
    const before = await ours();
    expect(before.length).toBeGreaterThan(0);
    expect((await discover({ issuer: `${origin}/realms/acme` })).status).toBe(200);
    expect((await discover({ issuer: `${origin}/mismatch` })).status).toBe(422);
    expect(await ours()).toEqual(before);
  });
});

describe('POST /api/v1/team/sso/discover: each error code reached', () => {
  it('INVALID_INPUT: missing, not a string, too long, not a URL', async () => {
    for (const body of [
      {},
      { issuer: '' },
      { issuer: 42 },
      { issuer: null },
      { issuer: { url: origin } },
      { issuer: `${origin}/${'a'.repeat(2100)}` },
      { issuer: 'sso.example.com/realms/acme' },
    ]) {
      expectError(await discover(body), 422, 'INVALID_INPUT');
    }
    const noBody = await platform.api('POST', '/api/v1/team/sso/discover', { token: m.admin.token });
    expectError(noBody, 422, 'INVALID_INPUT');
    expect(noBody.body.error).toBe('issuer is required: the https address of your identity provider.');
  });

  it('400 for a body that is not JSON (the pipeline)', async () => {
    expectError(
      await platform.api('POST', '/api/v1/team/sso/discover', {
        token: m.admin.token,
        rawBody: '{issuer',
        headers: { 'content-type': 'application/json' },
      }),
      400,
      'INVALID_JSON',
    );
  });

  // Refused private, link-local and metadata addresses are asked of the server only inside an empty
  // network namespace (sso-ssrf-netns.test.ts), and of the guard as a pure function (unit tests).
  it('SSO_ISSUER_INVALID: bad scheme, credentials, query, fragment', async () => {
    const cases: [string, string][] = [
      ['ftp://127.0.0.1/realms/acme', 'scheme_not_allowed'],
      ['javascript:alert(1)', 'scheme_not_allowed'],
      [`${origin.replace('http://', 'http://admin:pw@')}/realms/acme`, 'credentials_in_url'],
      [`${origin}/realms/acme?kc_idp_hint=x`, 'query_or_fragment'],
      [`${origin}/realms/acme#x`, 'query_or_fragment'],
    ];
    for (const [issuer, reason] of cases) {
      const reply = await discover({ issuer });
      expectError(reply, 422, 'SSO_ISSUER_INVALID');
      expect(reply.body.details).toEqual({ reason });
    }
    // No connection was attempted for any of them (the guard refuses before connecting).
    expect(hits.filter((h) => h.includes('kc_idp_hint'))).toEqual([]);
  });

  it('SSO_ISSUER_UNREACHABLE: refused connection, timeout, non-200, redirect (not followed), too large, not JSON', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));

    const reasons: [string, object][] = [
      [`http://127.0.0.1:${closedPort}/realms/acme`, { reason: 'connect_failed' }],
      [`${origin}/status-500`, { reason: 'http_status', status: 500 }],
      [`${origin}/nothing-here`, { reason: 'http_status', status: 404 }],
      [`${origin}/big-declared`, { reason: 'too_large', max_bytes: 262144 }],
      [`${origin}/big-chunked`, { reason: 'too_large', max_bytes: 262144 }],
      [`${origin}/not-json`, { reason: 'not_json' }],
      [`${origin}/array`, { reason: 'not_json' }],
    ];
    for (const [issuer, details] of reasons) {
      const reply = await discover({ issuer });
      expectError(reply, 422, 'SSO_ISSUER_UNREACHABLE');
      expect(reply.body.details).toEqual(details);
    }

    const before = hits.length;
    const redirected = await discover({ issuer: `${origin}/redirect` });
    expectError(redirected, 422, 'SSO_ISSUER_UNREACHABLE');
    expect(redirected.body.details).toEqual({ reason: 'redirect', status: 302 });
    expect(hits.slice(before)).toEqual(['/redirect/.well-known/openid-configuration']);

    process.env.SSO_DISCOVERY_TIMEOUT_MS = '300';
    try {
      const silent = await discover({ issuer: `${origin}/silent` });
      expectError(silent, 422, 'SSO_ISSUER_UNREACHABLE');
      expect(silent.body.details).toEqual({ reason: 'timeout' });
      expect(silent.body.error).toBe('The issuer did not answer in time.');
    } finally {
      delete process.env.SSO_DISCOVERY_TIMEOUT_MS;
    }
  });

  it('SSO_ISSUER_MISMATCH: the document names another issuer', async () => {
    const reply = await discover({ issuer: `${origin}/mismatch` });
    expectError(reply, 422, 'SSO_ISSUER_MISMATCH');
    expect(reply.body.details).toEqual({ entered: `${origin}/mismatch`, reported: 'https://login.other.example/tenant' });
    expect(reply.body.error).toBe('The discovery document reports the issuer https://login.other.example/tenant, not the address entered.');
  });

  it('SSO_DISCOVERY_INCOMPLETE: missing endpoints, or no issuer', async () => {
    const reply = await discover({ issuer: `${origin}/incomplete` });
    expectError(reply, 422, 'SSO_DISCOVERY_INCOMPLETE');
    expect(reply.body.details).toEqual({ missing: ['token_endpoint', 'jwks_uri'] });
    expect(reply.body.error).toBe('The discovery document lacks token_endpoint, jwks_uri.');
    const noIssuer = await discover({ issuer: `${origin}/no-issuer` });
    expectError(noIssuer, 422, 'SSO_DISCOVERY_INCOMPLETE');
    expect(noIssuer.body.details).toEqual({ missing: ['issuer'] });
  });
});

describe('POST /api/v1/team/sso/discover: authorization matrix', () => {
  const body = () => ({ issuer: `${origin}/realms/acme` });

  it('401 without a token or with an unknown one', async () => {
    expectError(await platform.api('POST', '/api/v1/team/sso/discover', { body: body() }), 401, 'UNAUTHENTICATED');
    expectError(await discover(body(), `slw_k_${'b'.repeat(43)}`), 401, 'UNAUTHENTICATED');
  });

  it.each(['owner', 'admin', 'apiKey'] as const)('200 for the %s', async (who) => {
    expect((await discover(body(), m[who].token)).status).toBe(200);
  });

  it('403 for a member', async () => {
    expectError(await discover(body(), m.member.token), 403, 'FORBIDDEN');
  });

  it('another team: its owner discovers for their own team, naming this team is 403', async () => {
    expect((await discover(body(), m.outsider.token)).status).toBe(200);
    expectError(await discover(body(), m.outsider.token, { 'x-team-id': m.team.id }), 403, 'FORBIDDEN');
  });

  it('a platform admin who is no member: 403 for the team, 400 with no team', async () => {
    expectError(await discover(body(), m.platformAdmin.token, { 'x-team-id': m.team.id }), 403, 'FORBIDDEN');
    expectError(await discover(body(), m.platformAdmin.token), 400, 'NO_CURRENT_TEAM');
  });

  it('authorization comes before any fetch: a member cannot make the server fetch', async () => {
    const before = hits.length;
    expectError(await discover({ issuer: `${origin}/generic` }, m.member.token), 403, 'FORBIDDEN');
    expect(hits.length).toBe(before);
  });
});
