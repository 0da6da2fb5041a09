import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { isConditionalCheckFailure } from './errors.ts';
import { keys } from './keys.ts';
import type { NamedWrite } from './transact.ts';

/**
 * The records of fixed-window rate counters (confirmation resends, sign-in links, abuse reports): one item
 * per (scope, window start), counted by conditional ADDs (`count < limit`), so parallel requests never
 * overshoot; an item expires by TTL after its window.
 */

/** The ADD that takes one from the allowance of `scope` in the window, refused at `limit`. */
function take(scope: string, limit: number, windowStart: number, expiresEpoch: number) {
  return {
    Key: keys.rateWindow(scope, windowStart),
    UpdateExpression: 'ADD #count :one SET #type = :type, #ttl = :ttl',
    ConditionExpression: 'attribute_not_exists(#count) OR #count < :limit',
    ExpressionAttributeNames: { '#count': 'count', '#type': 'type', '#ttl': 'ttl' },
    ExpressionAttributeValues: { ':one': 1, ':limit': limit, ':type': 'rate_window', ':ttl': expiresEpoch },
  };
}

/** One from the allowance of `scope` in the window, in a transaction of several (`scope` names the write). */
export function windowTake(scope: string, limit: number, windowStart: number, expiresEpoch: number): NamedWrite {
  return { name: scope, write: { Update: take(scope, limit, windowStart, expiresEpoch) } };
}

/** One from the allowance of `scope` in the window, alone (one conditional ADD); false at `limit`. */
export async function tryWindowTake(scope: string, limit: number, windowStart: number, expiresEpoch: number): Promise<boolean> {
  try {
    await dynamo().send(new UpdateCommand({ TableName: config.tableName(), ...take(scope, limit, windowStart, expiresEpoch) }));
    return true;
  } catch (error) {
    if (isConditionalCheckFailure(error)) return false;
    throw error;
  }
}

/** Gives one back to the allowance of `scope` in the window (an outage must not use up the hour). */
export async function windowGiveBack(scope: string, windowStart: number): Promise<void> {
  await dynamo().send(
    new UpdateCommand({
      TableName: config.tableName(),
      Key: keys.rateWindow(scope, windowStart),
      UpdateExpression: 'ADD #count :minusOne',
      ConditionExpression: '#count > :zero',
      ExpressionAttributeNames: { '#count': 'count' },
      ExpressionAttributeValues: { ':minusOne': -1, ':zero': 0 },
    }),
  );
}
