import { defineHandler } from '../../../lib/http/pipeline.ts';
import { removeMember } from '../../../lib/teams/membership-records.ts';

export const handler = defineHandler('DELETE /api/v1/team/members/{user_id}', {}, async ({ team, params }) => {
  const userId = params.user_id!.toLowerCase();
  await removeMember(team!.team.id, userId);
  return { data: { user_id: userId, status: 'removed' } };
});
