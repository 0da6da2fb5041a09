import * as z from '../../../lib/schema.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { transferOwnership } from '../../../lib/teams/ownership.ts';

const body = z.strictObject({ new_owner_id: z.uuid() });

export const handler = defineHandler('POST /api/v1/team/members/transfer', { body }, async ({ team, principal, body }) => {
  const newOwnerId = body.new_owner_id.toLowerCase();
  await transferOwnership(team!.team.id, principal!.user!.user_id, newOwnerId);
  return { data: { message: 'Ownership transferred', new_owner_id: newOwnerId } };
});
