import { batchGetAll } from '../db/batch.ts';
import { keys } from '../db/keys.ts';
import { invitationView } from '../teams/invite.ts';
import { invitationStatus, listInvitationsForEmail } from '../teams/invitation-records.ts';
import { listMembershipsOfUser } from '../teams/membership-records.ts';
import { teamProfile, type Team } from '../teams/teams.ts';
import type { User } from '../users/user-records.ts';
import type { TeamItem } from '../teams/records.ts';

/** The signed-in person as the console shows them. */
export function meView(user: User) {
  return {
    user_id: user.user_id,
    email: user.email,
    name: user.name,
    email_verified: user.email_verified,
    is_platform_admin: user.is_platform_admin,
    default_team_id: user.default_team_id ?? null,
  };
}

async function teamsById(ids: string[]): Promise<Map<string, Team>> {
  if (ids.length === 0) return new Map();
  const items = await batchGetAll<TeamItem>([...new Set(ids)].map((id) => keys.team(id)));
  return new Map(items.map((item) => [item.id, item]));
}

/** The teams the person belongs to, with their role in each and whether deletion is pending, by team name. */
export async function teamsOfUser(user: User) {
  const memberships = await listMembershipsOfUser(user.user_id);
  const teams = await teamsById(memberships.map((m) => m.team_id));
  return memberships
    .flatMap((m) => {
      const team = teams.get(m.team_id);
      if (!team) return [];
      const item = team as Team & { status?: string; purge_after?: string };
      const deletion = { status: item.status ?? 'active', purge_after: item.purge_after ?? null };
      return [{ ...teamProfile(team), role: m.role, joined_at: m.joined_at, deletion }];
    })
    .sort((a, b) => a.display_label.localeCompare(b.display_label));
}

/** Invitations to the person's address that can still be accepted, with the inviting team's name. */
export async function pendingInvitationsOf(user: User) {
  const now = new Date();
  const pending = (await listInvitationsForEmail(user.email)).filter((i) => invitationStatus(i, now) === 'pending');
  const teams = await teamsById(pending.map((i) => i.team_id));
  return pending.map((i) => {
    const team = teams.get(i.team_id);
    return { ...invitationView(i, now), team_name: team ? teamProfile(team).display_label : null };
  });
}
