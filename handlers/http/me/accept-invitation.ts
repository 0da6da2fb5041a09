import { ApiError } from '../../../lib/errors/api-error.ts';
import { INVITATION_NOT_FOUND } from '../../../lib/errors/catalogue/accounts.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { acceptInvitation, listInvitationsForEmail } from '../../../lib/teams/invitation-records.ts';

export const handler = defineHandler('POST /api/v1/me/invitations/{id}/accept', {}, async ({ principal, params }) => {
  const user = principal!.user!;
  // Read by the person's own address: an invitation to someone else is not theirs to see, so it is not found.
  const invitation = (await listInvitationsForEmail(user.email)).find((i) => i.id === params.id);
  if (!invitation) throw new ApiError(INVITATION_NOT_FOUND);
  await acceptInvitation(invitation, user);
  return { data: { status: 'accepted', team_id: invitation.team_id, role: invitation.role } };
});
