import { defineHandler } from '../../../lib/http/pipeline.ts';
import { cancelTeamDeletion } from '../../../lib/lifecycle/team-deletion.ts';

export const handler = defineHandler('DELETE /api/v1/team/deletion', {}, async ({ team }) => {
  return { data: await cancelTeamDeletion(team!.team.id) };
});
