import * as z from '../../../lib/schema.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { invitationView, inviteToTeam } from '../../../lib/teams/invite.ts';

const body = z.strictObject({ email: z.email().check(z.maxLength(254)), role: z.enum(['admin', 'member']) });

export const handler = defineHandler('POST /api/v1/team/invitations', { body }, async ({ team, principal, body, log }) => {
  const invitation = await inviteToTeam(team!.team, { ...body, invitedBy: principal!.user?.user_id ?? null }, log);
  return { status: 201, data: invitationView(invitation) };
});
