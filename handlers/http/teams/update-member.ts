import * as z from '../../../lib/schema.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { setMemberRole } from '../../../lib/teams/membership-records.ts';

const body = z.strictObject({ role: z.enum(['admin', 'member']) });

export const handler = defineHandler('PATCH /api/v1/team/members/{user_id}', { body }, async ({ team, params, body }) => {
  const membership = await setMemberRole(team!.team.id, params.user_id!.toLowerCase(), body.role);
  return { data: { user_id: membership.user_id, role: membership.role } };
});
