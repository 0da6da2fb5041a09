import { loadSecrets, refreshSecret } from '../../../lib/aws/secrets.ts';
import { forgeJwks, JWKS_MAX_AGE_SECONDS } from '../../../lib/git/forge-keys.ts';
import { config } from '../../../lib/config.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';

// The key set comes from Secrets Manager on cold start, and again every five minutes (a rotation may be under way).
await loadSecrets(['forgeSigning']);
const REFRESH_MS = 5 * 60 * 1000;

/** The forge tokens' public keys (lib/git/forge-keys.ts), as a forge fetches a JWKS: the document itself, no envelope. */
export const handler = defineHandler('GET /.well-known/jwks.json', {}, async () => {
  await refreshSecret('forgeSigning', REFRESH_MS);
  return {
    raw: {
      statusCode: 200,
      headers: {
        'content-type': 'application/jwk-set+json',
        'cache-control': `public, max-age=${JWKS_MAX_AGE_SECONDS}`,
        'access-control-allow-origin': '*',
      },
      body: JSON.stringify(forgeJwks(config.forgeSigningKey(), new Date())),
    },
  };
});
