import { BatchGetCommand, BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';

/** DynamoDB's per-call limits: 100 keys for BatchGetItem, 25 requests for BatchWriteItem. */
const GET_MAX = 100;
const WRITE_MAX = 25;
/** Batches in flight at once. */
const CONCURRENCY = 8;

type Key = Record<string, unknown>;
type WriteRequest = { PutRequest: { Item: Record<string, unknown> } } | { DeleteRequest: { Key: Key } };

/** What DynamoDB left unprocessed (throttling) is asked again, with growing pauses, until nothing is left. */
async function untilProcessed<R>(first: R, send: (request: R) => Promise<R | undefined>): Promise<void> {
  let request: R | undefined = first;
  for (let attempt = 0; request && Object.keys(request).length > 0; attempt++) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 25 * 2 ** attempt)));
    request = await send(request);
  }
}

async function inBatches<T>(items: T[], size: number, work: (batch: T[]) => Promise<void>): Promise<void> {
  const limit = pLimit(CONCURRENCY);
  const batches: T[][] = [];
  for (let i = 0; i < items.length; i += size) batches.push(items.slice(i, i + size));
  await Promise.all(batches.map((batch) => limit(() => work(batch))));
}

/**
 * Every item of the table found under these keys (absent keys are left out), in no particular order;
 * `consistent` reads every write acknowledged before the call.
 */
export async function batchGetAll<T extends object>(itemKeys: Key[], projection?: string, consistent = false): Promise<T[]> {
  const table = config.tableName();
  const found: T[] = [];
  await inBatches(itemKeys, GET_MAX, (batch) =>
    untilProcessed<Record<string, { Keys: Key[]; ProjectionExpression?: string; ConsistentRead?: boolean }>>(
      {
        [table]: {
          Keys: batch,
          ...(projection ? { ProjectionExpression: projection } : {}),
          ...(consistent ? { ConsistentRead: true } : {}),
        },
      },
      async (request) => {
        const reply = await dynamo().send(new BatchGetCommand({ RequestItems: request }));
        found.push(...((reply.Responses?.[table] ?? []) as T[]));
        return reply.UnprocessedKeys as typeof request | undefined;
      },
    ),
  );
  return found;
}

/** Applies every put and delete request to the table (not atomically: for records that need no condition). */
export async function batchWriteAll(requests: WriteRequest[]): Promise<void> {
  const table = config.tableName();
  await inBatches(requests, WRITE_MAX, (batch) =>
    untilProcessed<Record<string, WriteRequest[]>>({ [table]: batch }, async (request) => {
      const reply = await dynamo().send(new BatchWriteCommand({ RequestItems: request as never }));
      return reply.UnprocessedItems as typeof request | undefined;
    }),
  );
}
