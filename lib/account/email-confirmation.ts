import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { createHash } from 'node:crypto';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { keys } from '../db/keys.ts';
import { ApiError } from '../errors/api-error.ts';
import { EMAIL_CONFIRMATION_INVALID } from '../errors/catalogue.ts';

// Consuming a link lives apart from sending one, so the confirm handler's
// bundle carries no SES client.

/** 32 random bytes, base64url. */
const CONFIRMATION_TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** Only this hash of a confirmation token is stored. */
export const confirmationTokenHash = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * Consumes a confirmation token and marks the address confirmed, in one
 * transaction: the token must exist, be unused and unexpired (so of two
 * racing confirms one wins), and the account's address must still be the one
 * the link was sent to.
 */
export async function confirmEmail(token: string): Promise<{ user_id: string; email: string }> {
  if (!CONFIRMATION_TOKEN_SHAPE.test(token)) throw new ApiError(EMAIL_CONFIRMATION_INVALID);
  const key = keys.emailConfirmation(confirmationTokenHash(token));
  const found = await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: key }));
  const record = found.Item;
  if (!record) throw new ApiError(EMAIL_CONFIRMATION_INVALID);
  const now = new Date().toISOString();
  try {
    await dynamo().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: config.tableName(),
              Key: key,
              UpdateExpression: 'SET used_at = :now',
              ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(used_at) AND expires_at > :now',
              ExpressionAttributeValues: { ':now': now },
            },
          },
          {
            Update: {
              TableName: config.tableName(),
              Key: keys.user(record.user_id as string),
              UpdateExpression: 'SET email_verified = :true, email_verified_at = if_not_exists(email_verified_at, :now)',
              ConditionExpression: 'email = :email',
              ExpressionAttributeValues: { ':true': true, ':now': now, ':email': record.email },
            },
          },
        ],
      }),
    );
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'TransactionCanceledException' || name === 'TransactionConflictException') {
      throw new ApiError(EMAIL_CONFIRMATION_INVALID);
    }
    throw error;
  }
  return { user_id: record.user_id as string, email: record.email as string };
}
