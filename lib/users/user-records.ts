import { randomUUID } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { getItem, type Stored } from '../db/item.ts';
import { keys } from '../db/keys.ts';
import { type NamedWrite, TransactionRefused, transact } from '../db/transact.ts';

/**
 * The records of users: the user item, and the e-mail item that makes an address unique (claimed by a
 * conditional write with the user).
 */

export interface User {
  user_id: string;
  email: string;
  name: string | null;
  email_verified: boolean;
  is_platform_admin: boolean;
  /** Absent until the user joins a first team (if_not_exists sets it then). */
  default_team_id?: string;
  source: string;
  created_at: string;
}

export class EmailTakenError extends Error {}

/** Creates a user; the e-mail address is unique, enforced by a conditional write. */
export async function createUser(input: {
  email: string;
  name?: string | null;
  isPlatformAdmin?: boolean;
  /** How the account came to be: `operator` (admin create-user) or `email_link` (a first sign-in). */
  source?: 'operator' | 'email_link';
  emailVerified?: boolean;
}): Promise<User> {
  const user: User = {
    user_id: randomUUID(),
    email: input.email.trim().toLowerCase(),
    name: input.name ?? null,
    email_verified: input.emailVerified ?? false,
    is_platform_admin: input.isPlatformAdmin ?? false,
    source: input.source ?? 'operator',
    created_at: new Date().toISOString(),
  };
  try {
    await transact([
      {
        name: 'email',
        write: {
          Put: {
            Item: { ...keys.userEmail(user.email), type: 'user_email', user_id: user.user_id },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
      },
      {
        name: 'user',
        write: { Put: { Item: { ...keys.user(user.user_id), type: 'user', ...user }, ConditionExpression: 'attribute_not_exists(pk)' } },
      },
    ]);
  } catch (error) {
    if (error instanceof TransactionRefused) throw new EmailTakenError(`A user with e-mail ${user.email} exists`);
    throw error;
  }
  return user;
}

/** An address's platform-wide claim: which user holds it. */
type UserEmailItem = Stored<{ type: 'user_email'; user_id: string }>;

export async function getUser(userId: string): Promise<User | null> {
  const result = await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.user(userId) }));
  if (!result.Item) return null;
  const { pk: _pk, sk: _sk, type: _type, ...user } = result.Item;
  return user as User;
}

/** The user holding an e-mail address (case-insensitive), or null. */
export async function getUserByEmail(email: string): Promise<User | null> {
  const claim = await getItem<UserEmailItem>(keys.userEmail(email.trim().toLowerCase()));
  return claim?.user_id ? getUser(claim.user_id) : null;
}

/** Records that the person controls the account's address (they opened a link mailed to it). */
export async function markEmailVerified(user: User): Promise<User> {
  if (user.email_verified) return user;
  const now = new Date().toISOString();
  await dynamo().send(
    new UpdateCommand({
      TableName: config.tableName(),
      Key: keys.user(user.user_id),
      UpdateExpression: 'SET email_verified = :true, email_verified_at = if_not_exists(email_verified_at, :now)',
      // The address may have changed since the link went out: then it proves nothing about the new one.
      ConditionExpression: 'email = :email',
      ExpressionAttributeValues: { ':true': true, ':now': now, ':email': user.email },
    }),
  );
  return { ...user, email_verified: true };
}

/**
 * The user joins a team (`user`): the first team a user joins becomes their default team. `firstTeamOnly`:
 * only while the user has none yet (a first sign-in's personal team), so two racing ones make one.
 */
export function userJoinsTeam(userId: string, teamId: string, options: { firstTeamOnly?: boolean } = {}): NamedWrite {
  return {
    name: 'user',
    write: {
      Update: {
        Key: keys.user(userId),
        UpdateExpression: 'SET default_team_id = if_not_exists(default_team_id, :team)',
        ConditionExpression: options.firstTeamOnly
          ? 'attribute_exists(pk) AND attribute_not_exists(default_team_id)'
          : 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':team': teamId },
      },
    },
  };
}

/** The account's address is confirmed (`user`), on the condition that it is still `email`. */
export function emailVerified(userId: string, email: string, now: string): NamedWrite {
  return {
    name: 'user',
    write: {
      Update: {
        Key: keys.user(userId),
        UpdateExpression: 'SET email_verified = :true, email_verified_at = if_not_exists(email_verified_at, :now)',
        ConditionExpression: 'email = :email',
        ExpressionAttributeValues: { ':true': true, ':now': now, ':email': email },
      },
    },
  };
}
