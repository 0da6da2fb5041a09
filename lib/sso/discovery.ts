import { config } from '../config.ts';
import { ApiError } from '../errors/api-error.ts';
import {
  INVALID_INPUT,
  SSO_DISCOVERY_INCOMPLETE,
  SSO_ISSUER_INVALID,
  SSO_ISSUER_MISMATCH,
  SSO_ISSUER_UNREACHABLE,
} from '../errors/catalogue/accounts.ts';
import { checkIssuerAddress, refusalMessages, type Resolver } from './address-guard.ts';
import { DocumentFetchError, fetchJsonDocument, type FetchFailure } from './fetch-document.ts';
import { type JsonObject } from '../json.ts';

/** Longest issuer address accepted; real ones are far shorter. */
export const MAX_ISSUER_LENGTH = 2048;
/** Discovery documents are a few KB; anything near this is not one. */
export const MAX_DISCOVERY_DOCUMENT_BYTES = 256 * 1024;

export type IdentityProviderFlavour = 'generic_oidc' | 'keycloak' | 'authentik';

export interface DiscoveryWarning {
  code: string;
  docs_url: string;
  message: string;
}

/** The spec's "Identity provider discovery result". */
export interface IdentityProviderDiscovery {
  issuer: string;
  provider: IdentityProviderFlavour;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  userinfo_endpoint: string;
  redirect_uri: string;
  recommended_is_id_token_mapping: boolean;
  suggested_issuer: string;
  suggested_name: string;
  warnings: DiscoveryWarning[];
}

const REQUIRED_FIELDS = ['authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const;

const unreachableMessages: Record<FetchFailure['reason'] | 'unresolvable', string> = {
  unresolvable: 'The issuer host name does not resolve.',
  connect_failed: 'The issuer could not be reached.',
  timeout: 'The issuer did not answer in time.',
  redirect: 'The discovery document address answers with a redirect; enter the issuer address it redirects to.',
  http_status: 'The discovery document address did not answer 200 OK.',
  too_large: 'The discovery document is too large to be one.',
  not_json: 'The discovery document is not JSON.',
};

const stripTrailingSlash = (value: string) => value.replace(/\/+$/, '');

/** Parses what the admin typed; INVALID_INPUT when it is not a usable string or not an absolute URL. */
export function parseIssuerInput(body: unknown): { typed: string; url: URL } {
  const issuer = body !== null && typeof body === 'object' ? (body as JsonObject).issuer : undefined;
  if (issuer === undefined || issuer === null) {
    throw new ApiError(INVALID_INPUT, { details: { field: 'issuer', reason: 'missing' } });
  }
  if (typeof issuer !== 'string') throw new ApiError(INVALID_INPUT, { details: { field: 'issuer', reason: 'not_a_string' } });
  const typed = issuer.trim();
  if (!typed) throw new ApiError(INVALID_INPUT, { details: { field: 'issuer', reason: 'missing' } });
  if (typed.length > MAX_ISSUER_LENGTH) {
    throw new ApiError(INVALID_INPUT, {
      message: `issuer is at most ${MAX_ISSUER_LENGTH} characters.`,
      details: { field: 'issuer', reason: 'too_long', max_length: MAX_ISSUER_LENGTH },
    });
  }
  let url: URL;
  try {
    url = new URL(typed);
  } catch {
    throw new ApiError(INVALID_INPUT, {
      message: 'issuer is not an absolute URL, e.g. https://login.example.com/realms/acme.',
      details: { field: 'issuer', reason: 'not_a_url' },
    });
  }
  return { typed, url };
}

/** Flavour from the issuer path first (the stable signal), then provider-specific endpoint shapes. */
export function detectProvider(issuer: string, document: JsonObject): { provider: IdentityProviderFlavour; label?: string } {
  let path = '';
  try {
    path = new URL(issuer).pathname;
  } catch {
    // A non-URL issuer string was already refused as a mismatch; keep the generic flavour.
  }
  const realm = /\/realms\/([^/]+)\/?$/.exec(path);
  if (realm) return { provider: 'keycloak', label: decodeURIComponent(realm[1]!) };
  const application = /\/application\/o\/([^/]+)\/?$/.exec(path);
  if (application) return { provider: 'authentik', label: decodeURIComponent(application[1]!) };
  const endpoints = [document.authorization_endpoint, document.token_endpoint].filter((v): v is string => typeof v === 'string');
  if (endpoints.some((e) => e.includes('/protocol/openid-connect/'))) return { provider: 'keycloak' };
  if (endpoints.some((e) => e.includes('/application/o/'))) return { provider: 'authentik' };
  return { provider: 'generic_oidc' };
}

function suggestedName(provider: IdentityProviderFlavour, label: string | undefined, issuer: string): string {
  if (provider === 'keycloak') return label ? `Keycloak (${label})` : 'Keycloak';
  if (provider === 'authentik') return 'authentik';
  try {
    return new URL(issuer).hostname;
  } catch {
    return 'Single sign-on';
  }
}

/** The advisories creation would return too: things that work, but not as well as they could. */
export function discoveryWarnings(document: JsonObject, docsBaseUrl: string): DiscoveryWarning[] {
  const warning = (code: string, anchor: string, message: string) => ({ code, docs_url: `${docsBaseUrl}/integrations#${anchor}`, message });
  const warnings: DiscoveryWarning[] = [];
  if (typeof document.userinfo_endpoint !== 'string' || !document.userinfo_endpoint) {
    warnings.push(
      warning(
        'SSO_NO_USERINFO_ENDPOINT',
        'sso-no-userinfo-endpoint',
        'The provider has no userinfo endpoint; e-mail and name will be read from the ID token, so make sure the provider puts them there.',
      ),
    );
  }
  const algs = document.id_token_signing_alg_values_supported;
  if (Array.isArray(algs) && algs.length > 0 && algs.every((a) => typeof a === 'string' && (a === 'none' || /^HS\d+$/.test(a)))) {
    warnings.push(
      warning(
        'SSO_WEAK_ID_TOKEN_SIGNING',
        'sso-weak-id-token-signing',
        'The provider signs ID tokens only with none or a shared secret (HS*); configure an asymmetric algorithm such as RS256 or ES256.',
      ),
    );
  }
  const pkce = document.code_challenge_methods_supported;
  if (Array.isArray(pkce) && !pkce.includes('S256')) {
    warnings.push(
      warning(
        'SSO_NO_PKCE_S256',
        'sso-no-pkce-s256',
        'The provider does not advertise PKCE with S256; sign-in works, with less protection of the code exchange.',
      ),
    );
  }
  if (typeof document.end_session_endpoint !== 'string' || !document.end_session_endpoint) {
    warnings.push(
      warning(
        'SSO_NO_END_SESSION_ENDPOINT',
        'sso-no-end-session-endpoint',
        'The provider has no end_session_endpoint; signing out of the platform will not sign the person out of the provider.',
      ),
    );
  }
  return warnings;
}

/**
 * Fetches `{issuer}/.well-known/openid-configuration` through the SSRF guard
 * and reports what single sign-on creation would need. Writes nothing.
 */
export async function discoverIdentityProvider(
  body: unknown,
  options: { baseUrl: string; resolve?: Resolver },
): Promise<IdentityProviderDiscovery> {
  const { typed, url } = parseIssuerInput(body);
  const checked = await checkIssuerAddress(url, { allowLoopbackHttp: config.ssoAllowLoopbackHttp(), resolve: options.resolve });
  if (!checked.ok) {
    if ('unresolvable' in checked) {
      throw new ApiError(SSO_ISSUER_UNREACHABLE, { message: unreachableMessages.unresolvable, details: { reason: 'unresolvable' } });
    }
    throw new ApiError(SSO_ISSUER_INVALID, { message: refusalMessages[checked.refusal], details: { reason: checked.refusal } });
  }

  // OpenID Connect Discovery 1.0 §4: the issuer, without its trailing slash, plus the well-known path.
  const documentUrl = new URL(url.href);
  documentUrl.pathname = `${stripTrailingSlash(url.pathname)}/.well-known/openid-configuration`;
  let document: unknown;
  try {
    document = await fetchJsonDocument(documentUrl, checked.addresses, {
      timeoutMs: config.ssoDiscoveryTimeoutMs(),
      maxBytes: MAX_DISCOVERY_DOCUMENT_BYTES,
    });
  } catch (error) {
    if (!(error instanceof DocumentFetchError)) throw error;
    throw new ApiError(SSO_ISSUER_UNREACHABLE, { message: unreachableMessages[error.failure.reason], details: error.failure });
  }
  if (document === null || typeof document !== 'object' || Array.isArray(document)) {
    throw new ApiError(SSO_ISSUER_UNREACHABLE, { message: unreachableMessages.not_json, details: { reason: 'not_json' } });
  }
  const doc = document as JsonObject;

  const missing = [
    ...(typeof doc.issuer === 'string' && doc.issuer ? [] : ['issuer']),
    ...REQUIRED_FIELDS.filter((field) => typeof doc[field] !== 'string' || !doc[field]),
  ];
  if (missing.length > 0) {
    throw new ApiError(SSO_DISCOVERY_INCOMPLETE, {
      message: `The discovery document lacks ${missing.join(', ')}.`,
      details: { missing },
    });
  }

  const reported = doc.issuer as string;
  // The only disagreement worth fixing for the admin is a trailing slash; anything else is another issuer.
  if (stripTrailingSlash(reported) !== stripTrailingSlash(typed)) {
    throw new ApiError(SSO_ISSUER_MISMATCH, {
      message: `The discovery document reports the issuer ${reported}, not the address entered.`,
      details: { entered: typed, reported },
    });
  }

  const { provider, label } = detectProvider(reported, doc);
  const userinfo = typeof doc.userinfo_endpoint === 'string' ? doc.userinfo_endpoint : '';
  return {
    issuer: reported,
    provider,
    authorization_endpoint: doc.authorization_endpoint as string,
    token_endpoint: doc.token_endpoint as string,
    jwks_uri: doc.jwks_uri as string,
    userinfo_endpoint: userinfo,
    redirect_uri: config.ssoRedirectUri() ?? `${options.baseUrl}/api/v1/auth/sso/callback`,
    // Without a userinfo endpoint the ID token is the only source of claims.
    recommended_is_id_token_mapping: userinfo === '',
    suggested_issuer: reported === typed ? '' : reported,
    suggested_name: suggestedName(provider, label, reported),
    warnings: discoveryWarnings(doc, config.docsBaseUrl()),
  };
}
