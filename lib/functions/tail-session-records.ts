import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';
import { epochSeconds, keys } from '../db/keys.ts';

/**
 * Open live tails of a function (`FNTAIL#{function_id}` / `SESSION#{id}`): each names the short-lived queue its
 * watcher reads. Nothing of a call is written here: the item says only that someone watches, and where to. It
 * carries an expiry that the watcher renews while it is connected, and the table's TTL, so a watcher that died
 * without closing stops being fed at its expiry and its item goes soon after.
 */

export interface TailSession {
  session_id: string;
  function_id: string;
  queue_url: string;
  /** Epoch milliseconds; a door forwards nothing to a session past it. */
  expires_at: number;
}

const itemOf = (session: TailSession) => ({
  ...keys.functionTailSession(session.function_id, session.session_id),
  type: 'function_tail_session',
  ...session,
  // DynamoDB deletes expired items only eventually: readers check expires_at themselves.
  ttl: epochSeconds(new Date(session.expires_at)) + 60,
});

export async function putTailSession(session: TailSession): Promise<void> {
  await dynamo().send(
    new PutCommand({ TableName: config.tableName(), Item: itemOf(session), ConditionExpression: 'attribute_not_exists(pk)' }),
  );
}

/** Moves the expiry on; false when the session is gone (closed elsewhere). */
export async function renewTailSession(session: TailSession, expiresAt: number): Promise<boolean> {
  try {
    await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.functionTailSession(session.function_id, session.session_id),
        UpdateExpression: 'SET expires_at = :at, #ttl = :ttl',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':at': expiresAt, ':ttl': epochSeconds(new Date(expiresAt)) + 60 },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionalCheckFailure(error)) return false;
    throw error;
  }
}

export async function deleteTailSession(session: Pick<TailSession, 'function_id' | 'session_id'>): Promise<void> {
  await dynamo().send(
    new DeleteCommand({ TableName: config.tableName(), Key: keys.functionTailSession(session.function_id, session.session_id) }),
  );
}

/** One session as stored, expired or not; null when there is none. */
export async function getTailSession(functionId: string, sessionId: string): Promise<TailSession | null> {
  const reply = await dynamo().send(
    new GetCommand({
      TableName: config.tableName(),
      Key: keys.functionTailSession(functionId, sessionId),
      ProjectionExpression: 'session_id, function_id, queue_url, expires_at',
      ConsistentRead: true,
    }),
  );
  return (reply.Item as TailSession | undefined) ?? null;
}

/**
 * Deletes a session whose watcher is gone, only if its expiry is still the one read (`expires_at`): a watcher that
 * renewed it meanwhile keeps it. False when it was renewed or is gone already.
 */
export async function deleteExpiredTailSession(session: Pick<TailSession, 'function_id' | 'session_id' | 'expires_at'>): Promise<boolean> {
  try {
    await dynamo().send(
      new DeleteCommand({
        TableName: config.tableName(),
        Key: keys.functionTailSession(session.function_id, session.session_id),
        ConditionExpression: 'expires_at = :seen',
        ExpressionAttributeValues: { ':seen': session.expires_at },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionalCheckFailure(error)) return false;
    throw error;
  }
}

/** The function's sessions not past their expiry (one Query of a small partition; at most a few watchers). */
export async function listOpenTailSessions(functionId: string, now = Date.now()): Promise<TailSession[]> {
  const reply = await dynamo().send(
    new QueryCommand({
      TableName: config.tableName(),
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.functionTailSession(functionId, '').pk },
      ProjectionExpression: 'session_id, function_id, queue_url, expires_at',
    }),
  );
  return ((reply.Items ?? []) as TailSession[]).filter((session) => Number(session.expires_at) > now);
}
