import { defineHandler } from '../../../lib/http/pipeline.ts';
import { invitationView } from '../../../lib/teams/invite.ts';
import { listTeamInvitations } from '../../../lib/teams/invitation-records.ts';

export const handler = defineHandler('GET /api/v1/team/invitations', {}, async ({ team }) => ({
  data: (await listTeamInvitations(team!.team.id)).map((i) => invitationView(i)),
}));
