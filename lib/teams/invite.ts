import { sendTextMail } from '../aws/ses.ts';
import { config } from '../config.ts';
import type { TeamRole } from '../access/rules.ts';
import { ApiError } from '../errors/api-error.ts';
import { ALREADY_A_MEMBER, EMAIL_DELIVERY_UNAVAILABLE, INVITATION_PENDING } from '../errors/catalogue/accounts.ts';
import type { RequestLogger } from '../logger.ts';
import { getUserByEmail } from '../users/user-records.ts';
import { createInvitation, invitationStatus, listTeamInvitations, revokeInvitation, type Invitation } from './invitation-records.ts';
import { getMembership } from './membership-records.ts';
import { displayLabel, type Team } from './teams.ts';

/** An invitation as the API shows it: with its status. */
export function invitationView(invitation: Invitation, now = new Date()) {
  return {
    id: invitation.id,
    team_id: invitation.team_id,
    email: invitation.email,
    role: invitation.role,
    status: invitationStatus(invitation, now),
    created_at: invitation.created_at,
    expires_at: invitation.expires_at,
    accepted_at: invitation.accepted_at,
    invited_by: invitation.invited_by ?? null,
  };
}

function invitationMail(team: Team, invitation: Invitation) {
  const text = [
    'Hello,',
    '',
    `You are invited to join the team "${displayLabel(team)}" on Slipway as ${invitation.role}.`,
    `Sign in with this address (${invitation.email}) and accept it here:`,
    `${config.consoleUrl()}/invitations`,
    '',
    `The invitation expires on ${invitation.expires_at.slice(0, 10)}.`,
  ].join('\n');
  return { subject: `Join ${displayLabel(team)} on Slipway`, text };
}

/**
 * Invites an address to the team and mails it. Refused when the address
 * already belongs to a member or has a pending invitation here (two racing
 * invitations of one address can both be made; that is harmless, since the
 * second accept finds a member and is refused). When SES fails nothing is
 * kept and the caller gets 503.
 */
export async function inviteToTeam(
  team: Team,
  input: { email: string; role: Exclude<TeamRole, 'owner'>; invitedBy: string | null },
  log: RequestLogger,
): Promise<Invitation> {
  const email = input.email.trim().toLowerCase();
  const [user, invitations] = await Promise.all([getUserByEmail(email), listTeamInvitations(team.id)]);
  if (user && (await getMembership(team.id, user.user_id))) throw new ApiError(ALREADY_A_MEMBER);
  if (invitations.some((i) => i.email === email && invitationStatus(i) === 'pending')) throw new ApiError(INVITATION_PENDING);
  const invitation = await createInvitation({ teamId: team.id, email, role: input.role, invitedBy: input.invitedBy });
  try {
    await sendTextMail(email, invitationMail(team, invitation));
  } catch (error) {
    log.error('invitation e-mail not sent', { error: (error as Error).name });
    await revokeInvitation(team.id, invitation.id).catch(() => undefined);
    throw new ApiError(EMAIL_DELIVERY_UNAVAILABLE);
  }
  return invitation;
}
