import { describe, expect, it } from 'vitest';
import { detectProvider, discoveryWarnings, parseIssuerInput } from '../../lib/sso/discovery.ts';

describe('detectProvider', () => {
  it('keycloak from the /realms/<realm> path, with the realm', () => {
    expect(detectProvider('https://sso.example.com/realms/acme', {})).toEqual({ provider: 'keycloak', label: 'acme' });
    expect(detectProvider('https://sso.example.com/auth/realms/acme/', {})).toEqual({ provider: 'keycloak', label: 'acme' });
  });
  it('authentik from the /application/o/<slug>/ path', () => {
    expect(detectProvider('https://auth.example.com/application/o/acme/', {})).toEqual({ provider: 'authentik', label: 'acme' });
  });
  it('from endpoint shapes when the path says nothing', () => {
    expect(
      detectProvider('https://sso.example.com', { authorization_endpoint: 'https://sso.example.com/protocol/openid-connect/auth' }),
    ).toEqual({
      provider: 'keycloak',
    });
    expect(
      detectProvider('https://auth.example.com', { authorization_endpoint: 'https://auth.example.com/application/o/authorize/' }),
    ).toEqual({
      provider: 'authentik',
    });
  });
  it('generic_oidc otherwise', () => {
    expect(detectProvider('https://login.example.com', { authorization_endpoint: 'https://login.example.com/oauth2/authorize' })).toEqual({
      provider: 'generic_oidc',
    });
  });
});

describe('discoveryWarnings', () => {
  const docs = 'https://docs.example';
  it('none for a complete document', () => {
    expect(
      discoveryWarnings(
        {
          userinfo_endpoint: 'https://x/userinfo',
          end_session_endpoint: 'https://x/logout',
          id_token_signing_alg_values_supported: ['RS256', 'HS256'],
          code_challenge_methods_supported: ['plain', 'S256'],
        },
        docs,
      ),
    ).toEqual([]);
  });
  it('each advisory with its code and docs link', () => {
    expect(
      discoveryWarnings({ id_token_signing_alg_values_supported: ['HS256', 'none'], code_challenge_methods_supported: ['plain'] }, docs),
    ).toEqual([
      {
        code: 'SSO_NO_USERINFO_ENDPOINT',
        docs_url: 'https://docs.example/integrations#sso-no-userinfo-endpoint',
        message: expect.any(String),
      },
      {
        code: 'SSO_WEAK_ID_TOKEN_SIGNING',
        docs_url: 'https://docs.example/integrations#sso-weak-id-token-signing',
        message: expect.any(String),
      },
      { code: 'SSO_NO_PKCE_S256', docs_url: 'https://docs.example/integrations#sso-no-pkce-s256', message: expect.any(String) },
      {
        code: 'SSO_NO_END_SESSION_ENDPOINT',
        docs_url: 'https://docs.example/integrations#sso-no-end-session-endpoint',
        message: expect.any(String),
      },
    ]);
  });
});

describe('parseIssuerInput', () => {
  it.each([
    [undefined, 'missing'],
    [{}, 'missing'],
    [{ issuer: '' }, 'missing'],
    [{ issuer: '   ' }, 'missing'],
    [{ issuer: 42 }, 'not_a_string'],
    [{ issuer: ['https://x'] }, 'not_a_string'],
    [{ issuer: `https://x.example/${'a'.repeat(2100)}` }, 'too_long'],
    [{ issuer: 'sso.example.com/realms/acme' }, 'not_a_url'],
  ])('%j is INVALID_INPUT (%s)', (body, reason) => {
    expect(() => parseIssuerInput(body)).toThrow(
      expect.objectContaining({ code: 'INVALID_INPUT', status: 422, details: expect.objectContaining({ reason }) }),
    );
  });
});
