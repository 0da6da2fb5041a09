import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { keys } from '../db/keys.ts';

/**
 * The team's blob store: uploaded files, content-addressed by SHA-256, in the
 * BUNDLES bucket. A table record per (team, hash) says the team holds a blob,
 * so narrowing a manifest's `missing` is batched reads instead of one
 * HeadObject per file.
 */
export function blobKey(teamId: string, hash: string): string {
  return `blobs/${teamId}/${hash}`;
}

const BATCH_GET_MAX = 100;

/** Which of these hashes the team's store already holds. */
export async function heldHashes(teamId: string, hashes: string[]): Promise<Set<string>> {
  const table = config.tableName();
  const held = new Set<string>();
  const limit = pLimit(8);
  const batches: string[][] = [];
  for (let i = 0; i < hashes.length; i += BATCH_GET_MAX) batches.push(hashes.slice(i, i + BATCH_GET_MAX));
  await Promise.all(
    batches.map((batch) =>
      limit(async () => {
        let request: Record<string, { Keys: Record<string, unknown>[]; ProjectionExpression?: string }> | undefined = {
          [table]: { Keys: batch.map((hash) => keys.heldBlob(teamId, hash)), ProjectionExpression: 'blob_hash' },
        };
        for (let attempt = 0; request && Object.keys(request).length > 0; attempt++) {
          if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 25 * 2 ** attempt)));
          const reply = await dynamo().send(new BatchGetCommand({ RequestItems: request }));
          for (const item of reply.Responses?.[table] ?? []) held.add(item.blob_hash as string);
          request = reply.UnprocessedKeys as typeof request;
        }
      }),
    ),
  );
  return held;
}

/** The record saying the team's store holds a blob (written after its bytes were checked and stored). */
export function heldBlobItem(teamId: string, hash: string, size: number) {
  return { ...keys.heldBlob(teamId, hash), type: 'blob', team_id: teamId, blob_hash: hash, size, stored_at: new Date().toISOString() };
}
