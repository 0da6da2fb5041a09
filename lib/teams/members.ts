import { batchGetAll } from '../db/batch.ts';
import type { User } from '../users/user-records.ts';
import { keys } from '../db/keys.ts';
import { roleRank } from '../access/rules.ts';
import { listTeamMemberships } from './membership-records.ts';

/** A team's members with their names and addresses: the owner first, then by role and address. */
export async function teamMembers(teamId: string) {
  const memberships = await listTeamMemberships(teamId);
  const users = memberships.length ? await batchGetAll<User>(memberships.map((m) => keys.user(m.user_id))) : [];
  const byId = new Map(users.map((u) => [u.user_id, u]));
  return memberships
    .map((m) => ({
      user_id: m.user_id,
      email: byId.get(m.user_id)?.email ?? null,
      name: byId.get(m.user_id)?.name ?? null,
      role: m.role,
      joined_at: m.joined_at,
    }))
    .sort((a, b) => roleRank[b.role] - roleRank[a.role] || (a.email ?? '').localeCompare(b.email ?? ''));
}
