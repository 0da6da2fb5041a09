import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createHash, randomBytes } from 'node:crypto';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import type { Stored } from '../db/item.ts';
import { epochSeconds, keys } from '../db/keys.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';

/**
 * The records of e-mail sign-in links: only a token's SHA-256 is stored, with
 * the address it was sent to. A link works once (a conditional write sets
 * `used_at`) and for SIGN_IN_LINK_MINUTES.
 */

/** A sign-in link's item, keyed by its token's hash; `used_at` is set once, when the link is used. */
type SignInLinkItem = Stored<{
  type: 'sign_in_link';
  email: string;
  created_at: string;
  expires_at: string;
  ttl: number;
  used_at?: string;
}>;

export const SIGN_IN_LINK_MINUTES = 15;

/** 32 random bytes, base64url. */
const SIGN_IN_TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex');

/** Stores a new link for `email` and returns its token (to be mailed, never stored). */
export async function createSignInLink(email: string, now = new Date()): Promise<{ token: string; expiresAt: Date }> {
  const token = randomBytes(32).toString('base64url');
  const expiresAt = new Date(now.getTime() + SIGN_IN_LINK_MINUTES * 60_000);
  await dynamo().send(
    new PutCommand({
      TableName: config.tableName(),
      Item: {
        ...keys.signInLink(tokenHash(token)),
        type: 'sign_in_link',
        email,
        created_at: now.toISOString(),
        expires_at: expiresAt.toISOString(),
        ttl: epochSeconds(expiresAt),
      } satisfies SignInLinkItem,
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
  return { token, expiresAt };
}

/** Removes a link that could not be mailed. */
export async function deleteSignInLink(token: string): Promise<void> {
  await dynamo().send(new DeleteCommand({ TableName: config.tableName(), Key: keys.signInLink(tokenHash(token)) }));
}

/**
 * Uses a link: the address it was sent to, or null when the token is
 * malformed, unknown, expired or already used. One conditional update, so of
 * two racing uses exactly one gets the address.
 */
export async function consumeSignInLink(token: string): Promise<string | null> {
  if (!SIGN_IN_TOKEN_SHAPE.test(token)) return null;
  const now = new Date().toISOString();
  try {
    const reply = await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.signInLink(tokenHash(token)),
        UpdateExpression: 'SET used_at = :now',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(used_at) AND expires_at > :now',
        ExpressionAttributeValues: { ':now': now },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return (reply.Attributes as SignInLinkItem | undefined)?.email ?? null;
  } catch (error) {
    if (isConditionalCheckFailure(error)) return null;
    throw error;
  }
}
