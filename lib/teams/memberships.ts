import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { keys } from '../db/keys.ts';
import type { TeamRole } from '../http/access.ts';
import { membershipItem } from './teams.ts';
import { queryAll } from '../db/query.ts';

export interface Membership {
  team_id: string;
  user_id: string;
  role: TeamRole;
  created_at: string;
  joined_at: string;
}

export async function getMembership(teamId: string, userId: string): Promise<Membership | null> {
  const result = await dynamo().send(
    new GetCommand({ TableName: config.tableName(), Key: keys.membership(teamId, userId) }),
  );
  return (result.Item as Membership | undefined) ?? null;
}

/** Adds a member, or changes the role of an existing one (never to owner: ownership moves by transfer). */
export async function putMembership(teamId: string, userId: string, role: Exclude<TeamRole, 'owner'>): Promise<Membership> {
  const existing = await getMembership(teamId, userId);
  const now = new Date().toISOString();
  const item = { ...membershipItem(teamId, userId, role, now), ...(existing ? { created_at: existing.created_at, joined_at: existing.joined_at } : {}) };
  await dynamo().send(
    new TransactWriteCommand({
      TransactItems: [
        {
          Put: {
            TableName: config.tableName(),
            Item: item,
            // An owner's row is never overwritten here: that would leave the team ownerless.
            ConditionExpression: 'attribute_not_exists(pk) OR #role <> :owner',
            ExpressionAttributeNames: { '#role': 'role' },
            ExpressionAttributeValues: { ':owner': 'owner' },
          },
        },
        {
          // The first team a user joins becomes their default team.
          Update: {
            TableName: config.tableName(),
            Key: keys.user(userId),
            UpdateExpression: 'SET default_team_id = if_not_exists(default_team_id, :team)',
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeValues: { ':team': teamId },
          },
        },
      ],
    }),
  );
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
  const items = await queryAll({
    TableName: config.tableName(),
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :member)',
    FilterExpression: '#role = :owner',
    ExpressionAttributeNames: { '#role': 'role' },
    ExpressionAttributeValues: { ':pk': keys.team(teamId).pk, ':member': 'MEMBER#', ':owner': 'owner' },
  });
  return (items[0] as Membership | undefined) ?? null;
}
