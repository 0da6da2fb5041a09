import { randomUUID } from 'node:crypto';
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { keys } from '../db/keys.ts';
import { isTransactionCanceled } from '../db/errors.ts';

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
export async function createUser(input: { email: string; name?: string | null; isPlatformAdmin?: boolean }): Promise<User> {
  const user: User = {
    user_id: randomUUID(),
    email: input.email.trim().toLowerCase(),
    name: input.name ?? null,
    email_verified: false,
    is_platform_admin: input.isPlatformAdmin ?? false,
    source: 'operator',
    created_at: new Date().toISOString(),
  };
  try {
    await dynamo().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: config.tableName(),
              Item: { ...keys.userEmail(user.email), type: 'user_email', user_id: user.user_id },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          {
            Put: {
              TableName: config.tableName(),
              Item: { ...keys.user(user.user_id), type: 'user', ...user },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
        ],
      }),
    );
  } catch (error) {
    if (isTransactionCanceled(error)) {
      throw new EmailTakenError(`A user with e-mail ${user.email} exists`);
    }
    throw error;
  }
  return user;
}

export async function getUser(userId: string): Promise<User | null> {
  const result = await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.user(userId) }));
  if (!result.Item) return null;
  const { pk: _pk, sk: _sk, type: _type, ...user } = result.Item;
  return user as User;
}
