import { z } from 'zod';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { discoverIdentityProvider } from '../../../lib/sso/discovery.ts';

// The body is checked by discoverIdentityProvider so that bad input answers the spec's INVALID_INPUT.
export const handler = defineHandler('POST /api/v1/team/sso/discover', { body: z.unknown(), maxJsonBytes: 16 * 1024 }, async ({ body, baseUrl }) => ({
  data: await discoverIdentityProvider(body, { baseUrl }),
}));
