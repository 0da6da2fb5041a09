import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { epochSeconds, keys } from '../db/keys.ts';
import type { NamedWrite } from '../db/transact.ts';
import { getItem, type Stored } from '../db/item.ts';

/**
 * The records of e-mail confirmation links: one item per link, keyed by the SHA-256 of its token (never
 * the token), naming the account and the address it was sent to; used once, by a conditional write.
 */

export async function insertConfirmation(
  tokenHash: string,
  user: { user_id: string; email: string },
  now: Date,
  expires: Date,
): Promise<void> {
  await dynamo().send(
    new PutCommand({
      TableName: config.tableName(),
      Item: {
        ...keys.emailConfirmation(tokenHash),
        type: 'email_confirmation',
        user_id: user.user_id,
        email: user.email,
        created_at: now.toISOString(),
        expires_at: expires.toISOString(),
        ttl: epochSeconds(expires),
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
}

/** Removes a link that could not be mailed. */
export async function deleteConfirmation(tokenHash: string): Promise<void> {
  await dynamo().send(new DeleteCommand({ TableName: config.tableName(), Key: keys.emailConfirmation(tokenHash) }));
}

/** A confirmation link's item, as insertConfirmation writes it (`used_at` once used). */
export type ConfirmationItem = Stored<{
  type: 'email_confirmation';
  user_id: string;
  email: string;
  created_at: string;
  expires_at: string;
  used_at?: string;
  ttl: number;
}>;

export function getConfirmation(tokenHash: string): Promise<ConfirmationItem | null> {
  return getItem<ConfirmationItem>(keys.emailConfirmation(tokenHash));
}

/** The link is used now (`confirmation`): only once, and only before it expires. */
export function confirmationUse(tokenHash: string, now: string): NamedWrite {
  return {
    name: 'confirmation',
    write: {
      Update: {
        Key: keys.emailConfirmation(tokenHash),
        UpdateExpression: 'SET used_at = :now',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(used_at) AND expires_at > :now',
        ExpressionAttributeValues: { ':now': now },
      },
    },
  };
}
