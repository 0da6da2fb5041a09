import * as z from '../../../lib/schema.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { discoverIdentityProvider } from '../../../lib/sso/discovery.ts';

export const handler = defineHandler(
  'POST /api/v1/team/sso/discover',
  {
    // Checked by discoverIdentityProvider, not here, so that bad input answers the spec's INVALID_INPUT.
    body: z.unknown().register(z.globalRegistry, { description: '{ "issuer": string }; bad input answers INVALID_INPUT (422).' }),
    maxJsonBytes: 16 * 1024,
  },
  async ({ body, baseUrl }) => ({ data: await discoverIdentityProvider(body, { baseUrl }) }),
);
