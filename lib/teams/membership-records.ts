import { DeleteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { keys } from '../db/keys.ts';
import type { TeamRole } from '../access/rules.ts';
import { userJoinsTeam } from '../users/user-records.ts';
import { queryAll } from '../db/query.ts';
import { isConditionalCheckFailure, refusedItem } from '../db/errors.ts';
import { type NamedWrite, transact } from '../db/transact.ts';
import { ApiError } from '../errors/api-error.ts';
import { MEMBER_IS_OWNER, MEMBER_NOT_FOUND } from '../errors/catalogue/accounts.ts';

export interface Membership {
  team_id: string;
  user_id: string;
  role: TeamRole;
  created_at: string;
  joined_at: string;
}

/**
 * The records of team memberships: one item per (team, user) in the team's partition, indexed by user.
 * The owner's row is never overwritten, changed or removed here (ownership moves by transfer, one
 * transaction over both rows), so a team never has zero or two owners.
 */

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

/** A new member's row (`membership`: already a member when it fails). */
export function newMembership(teamId: string, userId: string, role: TeamRole, now: string, options = { onlyNew: true }): NamedWrite {
  return {
    name: 'membership',
    write: {
      Put: {
        Item: membershipItem(teamId, userId, role, now),
        ...(options.onlyNew ? { ConditionExpression: 'attribute_not_exists(pk)' } : {}),
      },
    },
  };
}

/**
 * Ownership moves (`old_owner`: the caller still owns the team; `new_owner`: the target is still an admin
 * or member); the previous owner becomes admin.
 */
export function ownershipMove(teamId: string, currentOwnerId: string, newOwnerId: string, now: string): NamedWrite[] {
  const names = { '#role': 'role' };
  return [
    {
      name: 'old_owner',
      write: {
        Update: {
          Key: keys.membership(teamId, currentOwnerId),
          UpdateExpression: 'SET #role = :admin, role_changed_at = :now',
          ConditionExpression: '#role = :owner',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: { ':admin': 'admin', ':owner': 'owner', ':now': now },
        },
      },
    },
    {
      name: 'new_owner',
      write: {
        Update: {
          Key: keys.membership(teamId, newOwnerId),
          UpdateExpression: 'SET #role = :owner, role_changed_at = :now',
          ConditionExpression: 'attribute_exists(pk) AND #role IN (:admin, :member)',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: { ':admin': 'admin', ':member': 'member', ':owner': 'owner', ':now': now },
        },
      },
    },
  ];
}

export async function getMembership(teamId: string, userId: string): Promise<Membership | null> {
  const result = await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.membership(teamId, userId) }));
  return (result.Item as Membership | undefined) ?? null;
}

/** Adds a member, or changes the role of an existing one (never to owner: ownership moves by transfer). */
export async function putMembership(teamId: string, userId: string, role: Exclude<TeamRole, 'owner'>): Promise<Membership> {
  const existing = await getMembership(teamId, userId);
  const now = new Date().toISOString();
  const item = {
    ...membershipItem(teamId, userId, role, now),
    ...(existing ? { created_at: existing.created_at, joined_at: existing.joined_at } : {}),
  };
  await transact([
    {
      name: 'membership',
      write: {
        Put: {
          Item: item,
          // An owner's row is never overwritten here: that would leave the team ownerless.
          ConditionExpression: 'attribute_not_exists(pk) OR #role <> :owner',
          ExpressionAttributeNames: { '#role': 'role' },
          ExpressionAttributeValues: { ':owner': 'owner' },
        },
      },
    },
    userJoinsTeam(userId, teamId),
  ]);
  return item;
}

export async function listMembershipsOfUser(userId: string): Promise<Membership[]> {
  return (await queryAll({
    TableName: config.tableName(),
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk AND begins_with(gsi1sk, :team)',
    ExpressionAttributeValues: { ':pk': `USER#${userId}`, ':team': 'TEAM#' },
  })) as unknown as Membership[];
}

/** The team's owner (one membership row has role `owner`), read from the team's partition by key; null for an unknown team. */
export async function getTeamOwner(teamId: string): Promise<Membership | null> {
  const items = await queryAll<Membership>({
    TableName: config.tableName(),
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :member)',
    FilterExpression: '#role = :owner',
    ExpressionAttributeNames: { '#role': 'role' },
    ExpressionAttributeValues: { ':pk': keys.team(teamId).pk, ':member': 'MEMBER#', ':owner': 'owner' },
  });
  return (items[0] as Membership | undefined) ?? null;
}

/** A team's memberships, by key from the team's partition. */
export async function listTeamMemberships(teamId: string): Promise<Membership[]> {
  const items = await queryAll<Membership>({
    TableName: config.tableName(),
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :member)',
    ExpressionAttributeValues: { ':pk': keys.team(teamId).pk, ':member': 'MEMBER#' },
  });
  return items.map((item) => ({
    team_id: item.team_id,
    user_id: item.user_id,
    role: item.role,
    created_at: item.created_at,
    joined_at: item.joined_at,
  }));
}

/** Why a conditional write on a membership was refused: no such member, or the member is the owner. */
function membershipRefusal(error: unknown): never {
  if (!isConditionalCheckFailure(error)) throw error;
  throw new ApiError(refusedItem<Membership>(error) ? MEMBER_IS_OWNER : MEMBER_NOT_FOUND);
}

/** Changes a member's role between admin and member; the owner's row is never touched (ownership moves by transfer). */
export async function setMemberRole(teamId: string, userId: string, role: Exclude<TeamRole, 'owner'>): Promise<Membership> {
  try {
    const reply = await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.membership(teamId, userId),
        UpdateExpression: 'SET #role = :role, role_changed_at = :now',
        ConditionExpression: 'attribute_exists(pk) AND #role <> :owner',
        ExpressionAttributeNames: { '#role': 'role' },
        ExpressionAttributeValues: { ':role': role, ':owner': 'owner', ':now': new Date().toISOString() },
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return reply.Attributes as Membership;
  } catch (error) {
    return membershipRefusal(error);
  }
}

/** Removes a member who is not the owner (a team is never left without one). */
export async function removeMember(teamId: string, userId: string): Promise<void> {
  try {
    await dynamo().send(
      new DeleteCommand({
        TableName: config.tableName(),
        Key: keys.membership(teamId, userId),
        ConditionExpression: 'attribute_exists(pk) AND #role <> :owner',
        ExpressionAttributeNames: { '#role': 'role' },
        ExpressionAttributeValues: { ':owner': 'owner' },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
  } catch (error) {
    membershipRefusal(error);
  }
}
