import * as z from '../../../lib/http/schema.ts';
import { ApiError } from '../../../lib/http/errors.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { setLegalHold } from '../../../lib/teams/deletion.ts';
import { UUID_PATTERN } from '../../../lib/teams/slug.ts';

const body = z.strictObject({ hold: z.boolean() });

export const handler = defineHandler('POST /api/v1/admin/teams/{id}/legal-hold', { body }, async ({ params, principal, body }) => {
  if (!UUID_PATTERN.test(params.id!)) throw new ApiError('TEAM_NOT_FOUND');
  return { data: await setLegalHold(params.id!.toLowerCase(), body.hold, principal!.user!.user_id) };
});
