import { randomUUID } from 'node:crypto';
import { TransactionRefused, transact } from '../db/transact.ts';
import { ApiError } from '../errors/api-error.ts';
import { CONFLICT } from '../errors/catalogue/request.ts';
import { TEAM_NOT_FOUND, TEAM_SLUG_INVALID, TEAM_SLUG_RESERVED, TEAM_SLUG_TAKEN } from '../errors/catalogue/accounts.ts';
import { userJoinsTeam } from '../users/user-records.ts';
import { RESERVED_TEAM_SLUGS, UUID_PATTERN, isValidTeamSlug, slugFromName, withRandomSuffix } from './slug.ts';
import { newTeamAttention } from './team-state-records.ts';
import { newMembership } from './membership-records.ts';
import { getTeamItem, getTeamSlugItem, newTeamWrites, profileWrites, type TeamFields } from './records.ts';

/** A team's profile fields, as stored (lib/teams/records.ts). */
export type Team = TeamFields;

/** A renamed-away slug keeps resolving, and stays held from other teams, this long. */
export const RETIRED_SLUG_DAYS = 30;

/**
 * Creates a team with an auto-picked slug and its owner's membership in one
 * transaction; the slug is claimed by a conditional write, retried with a
 * suffix when another team holds it.
 */
export class UserHasTeamError extends Error {}

/**
 * `personal`: the team a first sign-in makes; created only while the user has
 * no team yet (a condition on the user row), so two racing first sign-ins make
 * one team and the other gets UserHasTeamError.
 */
export async function createTeam(input: { name: string; ownerUserId: string; personal?: boolean }): Promise<Team> {
  const now = new Date().toISOString();
  const base = slugFromName(input.name);
  for (let attempt = 0; attempt < 5; attempt++) {
    const slug = attempt === 0 ? base : withRandomSuffix(base);
    const team: Team = { id: randomUUID(), name: input.name, slug, slug_chosen_at: null, created_at: now, updated_at: now };
    try {
      await transact([
        ...newTeamWrites(team),
        newMembership(team.id, input.ownerUserId, 'owner', now, { onlyNew: false }),
        userJoinsTeam(input.ownerUserId, team.id, { firstTeamOnly: input.personal }),
        // Its activation state: in the stuck-activation queue until it first publishes (lib/attention/team-state.ts).
        newTeamAttention(team.id, now),
      ]);
      return team;
    } catch (error) {
      if (!(error instanceof TransactionRefused)) throw error;
      if (error.failed.has('user')) {
        if (input.personal) throw new UserHasTeamError(`User ${input.ownerUserId} has a team`);
        throw new Error(`No user ${input.ownerUserId}`);
      }
      // Slug held by someone else: try again with a suffix.
    }
  }
  throw new Error('Could not pick a free team slug');
}

export async function getTeam(teamId: string): Promise<Team | null> {
  const item = await getTeamItem(teamId);
  if (!item) return null;
  const { pk: _pk, sk: _sk, type: _type, ...team } = item;
  return team;
}

/**
 * A team by UUID or slug. `retiredSlug` is set when the slug is one the team
 * renamed away from within the last 30 days (callers add the deprecation headers).
 */
export async function resolveTeam(idOrSlug: string): Promise<{ team: Team; retiredSlug: boolean } | null> {
  if (UUID_PATTERN.test(idOrSlug)) {
    const team = await getTeam(idOrSlug.toLowerCase());
    return team ? { team, retiredSlug: false } : null;
  }
  const slug = idOrSlug.toLowerCase();
  const item = await getTeamSlugItem(slug);
  if (!item) return null;
  const retired = item.state === 'retired';
  // DynamoDB TTL deletes lazily: an expired retired slug is treated as gone.
  if (retired && Date.parse(item.retired_until ?? '') <= Date.now()) return null;
  const team = await getTeam(item.team_id);
  if (!team) return null;
  return { team, retiredSlug: retired };
}

export function validateTeamSlug(slug: string): void {
  if (!isValidTeamSlug(slug)) throw new ApiError(TEAM_SLUG_INVALID, { details: { slug } });
  if (RESERVED_TEAM_SLUGS.has(slug)) throw new ApiError(TEAM_SLUG_RESERVED, { details: { slug } });
}

/**
 * Updates a team's name and/or slug. A slug change is one transaction: the new
 * slug is claimed (free, expired, or this team's own retired slug), the old one
 * is retired for 30 days, and the team row changes only if its slug is still
 * the one read, so two racing renames cannot both win.
 */
export async function updateTeamProfile(team: Team, changes: { name?: string; slug?: string }): Promise<Team> {
  const now = new Date();
  const newSlug = changes.slug?.toLowerCase();
  const slugChanges = newSlug !== undefined && newSlug !== team.slug;
  if (newSlug !== undefined && slugChanges) validateTeamSlug(newSlug);

  const retiredUntil = new Date(now.getTime() + RETIRED_SLUG_DAYS * 86_400_000);
  try {
    await transact(profileWrites(team, { name: changes.name, newSlug, slugChanges }, now, retiredUntil));
  } catch (error) {
    if (!(error instanceof TransactionRefused)) throw error;
    if (error.failed.has('slug')) throw new ApiError(TEAM_SLUG_TAKEN, { details: { slug: newSlug } });
    throw new ApiError(CONFLICT, { message: 'The team changed while this request ran. Reload and try again.' });
  }
  const updated = await getTeam(team.id);
  if (!updated) throw new ApiError(TEAM_NOT_FOUND);
  return updated;
}

/** What to show a human: never empty, never a bare identity-provider organization UUID. */
export function displayLabel(team: Pick<Team, 'name' | 'slug' | 'id'>): string {
  const name = team.name.trim();
  if (name && !UUID_PATTERN.test(name)) return name;
  if (team.slug && !UUID_PATTERN.test(team.slug)) return team.slug;
  return `Team ${team.id.slice(0, 8)}`;
}

export function teamProfile(team: Team) {
  return {
    id: team.id,
    name: team.name,
    slug: team.slug,
    display_label: displayLabel(team),
    slug_chosen_at: team.slug_chosen_at,
  };
}
