import * as z from '../../../lib/schema.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { issueApiKey } from '../../../lib/identity/credential-records.ts';

const body = z.strictObject({
  name: z.string().check(z.trim(), z.minLength(1), z.maxLength(100)),
  role: z.optional(z.enum(['admin', 'member'])),
});

// The token is in this reply only: the platform keeps its hash, so it can never be shown again.
export const handler = defineHandler('POST /api/v1/team/api-keys', { body }, async ({ team, principal, body }) => {
  const { token, key } = await issueApiKey(team!.team.id, body.role ?? 'member', { name: body.name, createdBy: principal!.user!.user_id });
  return { status: 201, data: { ...key, token } };
});
