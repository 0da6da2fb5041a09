import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { config } from '../config.ts';
import { decryptEnvValue, encryptEnvValue } from '../env/encryption.ts';

/**
 * A project's Git secrets, sealed at rest with the environment variables' key
 * (AES-256-GCM, bound to the project and the secret's name, so a sealed value
 * copied onto another project or field does not open): the webhook secret
 * deliveries are checked against, and the access token of `git_auth_mode`
 * `pat`. Neither is ever returned by the API after it is set.
 */
const context = (projectId: string, name: 'webhook_secret' | 'access_token') => ({ projectId, environment: 'git', name });

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

export const sealWebhookSecret = (projectId: string, secret: string) => encryptEnvValue(secret, context(projectId, 'webhook_secret'));
export const openWebhookSecret = (projectId: string, sealed: string) => decryptEnvValue(sealed, context(projectId, 'webhook_secret'));
export const sealAccessToken = (projectId: string, token: string) => encryptEnvValue(token, context(projectId, 'access_token'));
export const openAccessToken = (projectId: string, sealed: string) => decryptEnvValue(sealed, context(projectId, 'access_token'));

/** Lifetime of a forge token minted for one fetch. */
export const FORGE_TOKEN_SECONDS = 300;

const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

/**
 * `git_auth_mode` `forge_jwt`: a short-lived JWT minted for one fetch, with
 * the project's `forge_audience` as `aud`, nothing stored. It is signed
 * HS256 under a key derived from the platform's Git state secret; the forge
 * side of the integration checks it with the same key (docs/builds.md says
 * what the local platform does with it).
 */
export function mintForgeToken(input: { projectId: string; audience: string; now?: Date }): string {
  const iat = Math.floor((input.now ?? new Date()).getTime() / 1000);
  const header = base64url({ alg: 'HS256', typ: 'JWT' });
  const payload = base64url({
    iss: 'slipway',
    sub: `project:${input.projectId}`,
    aud: input.audience,
    iat,
    nbf: iat,
    exp: iat + FORGE_TOKEN_SECONDS,
    jti: randomUUID(),
  });
  const signature = createHmac('sha256', forgeTokenKey()).update(`${header}.${payload}`).digest('base64url');
  return `${header}.${payload}.${signature}`;
}

export function forgeTokenKey(): Buffer {
  return createHmac('sha256', config.gitStateSecret()).update('slipway-forge-jwt').digest();
}
