import { defineHandler } from '../../../lib/http/pipeline.ts';
import { revokeInvitation } from '../../../lib/teams/invitation-records.ts';

export const handler = defineHandler('DELETE /api/v1/team/invitations/{id}', {}, async ({ team, params }) => {
  await revokeInvitation(team!.team.id, params.id!.toLowerCase());
  return { data: { id: params.id!.toLowerCase(), status: 'revoked' } };
});
