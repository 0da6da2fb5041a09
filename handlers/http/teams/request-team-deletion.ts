import { defineHandler } from '../../../lib/http/pipeline.ts';
import { requestTeamDeletion } from '../../../lib/lifecycle/team-deletion.ts';

export const handler = defineHandler('POST /api/v1/team/deletion', {}, async ({ team, principal }) => {
  // 202: the team stays usable until `purge_after`, and the owner may take the request back until then.
  return { status: 202, data: await requestTeamDeletion(team!.team.id, principal!.user!.user_id) };
});
