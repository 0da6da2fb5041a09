import { randomUUID } from 'node:crypto';
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { epochSeconds, keys } from '../db/keys.ts';
import { ApiError } from '../errors/api-error.ts';
import { CONFLICT, TEAM_NOT_FOUND, TEAM_SLUG_INVALID, TEAM_SLUG_RESERVED, TEAM_SLUG_TAKEN } from '../errors/catalogue.ts';
import type { TeamRole } from '../http/access.ts';
import { RESERVED_TEAM_SLUGS, UUID_PATTERN, isValidTeamSlug, slugFromName, withRandomSuffix } from './slug.ts';
import { conditionFailedAt, isTransactionCanceled } from '../db/errors.ts';
import { newTeamAttentionItem } from '../attention/team-state.ts';

export interface Team {
  id: string;
  name: string;
  slug: string;
  slug_chosen_at: string | null;
  created_at: string;
  updated_at: string;
}

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
      await dynamo().send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: config.tableName(),
                Item: { ...keys.teamSlug(slug), type: 'team_slug', team_id: team.id, state: 'active' },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
            {
              Put: {
                TableName: config.tableName(),
                Item: { ...keys.team(team.id), type: 'team', ...team },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
            {
              Put: {
                TableName: config.tableName(),
                Item: membershipItem(team.id, input.ownerUserId, 'owner', now),
              },
            },
            {
              // The first team a user joins becomes their default team.
              Update: {
                TableName: config.tableName(),
                Key: keys.user(input.ownerUserId),
                UpdateExpression: 'SET default_team_id = if_not_exists(default_team_id, :team)',
                ConditionExpression: input.personal
                  ? 'attribute_exists(pk) AND attribute_not_exists(default_team_id)'
                  : 'attribute_exists(pk)',
                ExpressionAttributeValues: { ':team': team.id },
              },
            },
            // Its activation state: in the stuck-activation queue until it first publishes (lib/attention/team-state.ts).
            { Put: { TableName: config.tableName(), Item: newTeamAttentionItem(team.id, now) } },
          ],
        }),
      );
      return team;
    } catch (error) {
      if (!isTransactionCanceled(error)) throw error;
      if (conditionFailedAt(error, 3)) {
        if (input.personal) throw new UserHasTeamError(`User ${input.ownerUserId} has a team`);
        throw new Error(`No user ${input.ownerUserId}`);
      }
      // Slug held by someone else: try again with a suffix.
    }
  }
  throw new Error('Could not pick a free team slug');
}

export function membershipItem(teamId: string, userId: string, role: TeamRole, now: string) {
  return {
    ...keys.membership(teamId, userId),
    ...keys.membershipByUser(userId, teamId),
    type: 'membership',
    team_id: teamId,
    user_id: userId,
    role,
    created_at: now,
    joined_at: now,
  };
}

export async function getTeam(teamId: string): Promise<Team | null> {
  const result = await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.team(teamId) }));
  if (!result.Item) return null;
  const { pk: _pk, sk: _sk, type: _type, ...team } = result.Item;
  return team as Team;
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
  const result = await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.teamSlug(slug) }));
  const item = result.Item;
  if (!item) return null;
  const retired = item.state === 'retired';
  // DynamoDB TTL deletes lazily: an expired retired slug is treated as gone.
  if (retired && Date.parse(item.retired_until as string) <= Date.now()) return null;
  const team = await getTeam(item.team_id as string);
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
  const nowIso = now.toISOString();
  const newSlug = changes.slug?.toLowerCase();
  const slugChanges = newSlug !== undefined && newSlug !== team.slug;
  if (newSlug !== undefined && slugChanges) validateTeamSlug(newSlug);

  const set: string[] = ['updated_at = :now'];
  const values: Record<string, unknown> = { ':now': nowIso, ':oldSlug': team.slug };
  if (changes.name !== undefined) {
    set.push('#name = :name');
    values[':name'] = changes.name;
  }
  if (newSlug !== undefined) {
    // Submitting a slug, even the auto-picked one, records that it was chosen.
    set.push('slug = :newSlug', 'slug_chosen_at = :now');
    values[':newSlug'] = newSlug;
  }
  const teamUpdate = {
    Update: {
      TableName: config.tableName(),
      Key: keys.team(team.id),
      UpdateExpression: `SET ${set.join(', ')}`,
      ConditionExpression: 'slug = :oldSlug',
      ExpressionAttributeNames: changes.name !== undefined ? { '#name': 'name' } : undefined,
      ExpressionAttributeValues: values,
    },
  };
  const items: NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']> = [teamUpdate];
  if (slugChanges) {
    const retiredUntil = new Date(now.getTime() + RETIRED_SLUG_DAYS * 86_400_000);
    items.push(
      {
        Put: {
          TableName: config.tableName(),
          Item: { ...keys.teamSlug(newSlug), type: 'team_slug', team_id: team.id, state: 'active' },
          ConditionExpression: 'attribute_not_exists(pk) OR team_id = :team OR retired_until < :now',
          ExpressionAttributeValues: { ':team': team.id, ':now': nowIso },
        },
      },
      {
        Put: {
          TableName: config.tableName(),
          Item: {
            ...keys.teamSlug(team.slug),
            type: 'team_slug',
            team_id: team.id,
            state: 'retired',
            retired_until: retiredUntil.toISOString(),
            ttl: epochSeconds(retiredUntil),
          },
          ConditionExpression: 'team_id = :team',
          ExpressionAttributeValues: { ':team': team.id },
        },
      },
    );
  }
  try {
    await dynamo().send(new TransactWriteCommand({ TransactItems: items }));
  } catch (error) {
    if (!isTransactionCanceled(error)) throw error;
    if (conditionFailedAt(error, 1)) throw new ApiError(TEAM_SLUG_TAKEN, { details: { slug: newSlug } });
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
