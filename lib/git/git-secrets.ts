import { randomBytes, randomUUID } from 'node:crypto';
import { config } from '../config.ts';
import { decryptEnvValue, encryptEnvValue } from '../env/encryption.ts';
import { FORGE_TOKEN_SECONDS, signForgeToken } from './forge-keys.ts';

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

/**
 * `git_auth_mode` `forge_jwt`: a short-lived JWT minted for one fetch, nothing
 * stored, shaped like a workload identity token (GitHub Actions' OIDC tokens):
 * ES256 under the platform's forge signing key (lib/git/forge-keys.ts,
 * its public half at /.well-known/jwks.json), `iss` the platform's public
 * origin, `aud` the project's `forge_audience` (registered to its team:
 * lib/git/forge-audiences.ts), and `sub` naming the team and the project,
 * which a forge pins to the repository it serves (docs/builds.md).
 */
export function mintForgeToken(input: { teamId: string; projectId: string; audience: string; repository?: string; now?: Date }): string {
  const now = input.now ?? new Date();
  const iat = Math.floor(now.getTime() / 1000);
  return signForgeToken(
    config.forgeSigningKey(),
    {
      iss: config.forgeTokenIssuer(),
      sub: forgeTokenSubject(input.teamId, input.projectId),
      aud: input.audience,
      iat,
      nbf: iat,
      exp: iat + FORGE_TOKEN_SECONDS,
      jti: randomUUID(),
      team_id: input.teamId,
      project_id: input.projectId,
      ...(input.repository ? { repository: input.repository } : {}),
    },
    now,
  );
}

/** The `sub` of a project's forge tokens. */
export const forgeTokenSubject = (teamId: string, projectId: string) => `team:${teamId}:project:${projectId}`;
