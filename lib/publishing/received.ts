import { randomUUID } from 'node:crypto';
import { batchWriteAll } from '../db/batch.ts';
import { epochSeconds, keys } from '../db/keys.ts';
import { queryAll } from '../db/query.ts';
import { config } from '../config.ts';
import { heldBlobPuts, type HeldBlob } from './blob-records.ts';
import type { UploadSessionRecord } from '../deployments/session-record.ts';

/**
 * A session's record of what it received: one entry per upload request, written once its objects are
 * stored, naming their hashes. Finalize reads the session's entries in one query to know every file
 * asked for is in the deployment folder, where listing the folder would take S3 a call per thousand
 * keys, one after the other. An entry lives as long as its session's item.
 */
const ENTRY_PREFIX = 'RECEIVED#';

/** A session item (and its entries) lingers this long after it expired, so late calls learn "expired" rather than "not found". */
export const SESSION_RETENTION_SECONDS = 7 * 86_400;

/**
 * Records that `session` stored these blobs in its deployment folder: the team's held-blob records
 * (so no later upload of the team is asked for them) and the session's entry, in the same batched writes.
 */
export async function recordReceived(session: UploadSessionRecord, blobs: HeldBlob[]): Promise<void> {
  await batchWriteAll([
    ...heldBlobPuts(session.team_id, blobs),
    {
      PutRequest: {
        Item: {
          ...keys.uploadReceived(session.upload_id, randomUUID()),
          type: 'upload_received',
          hashes: blobs.map((blob) => blob.hash).join(' '),
          ttl: epochSeconds(new Date(session.expires_at)) + SESSION_RETENTION_SECONDS,
        },
      },
    },
  ]);
}

/** What an upload request recorded (`upload_received`): the hashes it stored, under an entry key of its own. */
type ReceivedEntry = { sk: string; hashes: string };

async function entries<A extends keyof ReceivedEntry>(uploadId: string, attribute: A): Promise<Pick<ReceivedEntry, A>[]> {
  return queryAll<Pick<ReceivedEntry, A>>({
    TableName: config.tableName(),
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :entry)',
    ExpressionAttributeValues: { ':pk': keys.uploadSession(uploadId).pk, ':entry': ENTRY_PREFIX },
    // Named, not written out: an attribute name in an expression must not be one of DynamoDB's reserved words.
    ProjectionExpression: '#a',
    ExpressionAttributeNames: { '#a': attribute },
    ConsistentRead: true,
  });
}

/** Every hash the session's upload requests recorded as stored. */
export async function receivedHashes(uploadId: string): Promise<Set<string>> {
  const hashes = new Set<string>();
  for (const entry of await entries(uploadId, 'hashes')) {
    for (const hash of entry.hashes.split(' ')) if (hash) hashes.add(hash);
  }
  return hashes;
}

/** The keys of the session's entries (deleted with the session). */
export async function receivedEntryKeys(uploadId: string): Promise<{ pk: string; sk: string }[]> {
  const pk = keys.uploadSession(uploadId).pk;
  return (await entries(uploadId, 'sk')).map((entry) => ({ pk, sk: entry.sk }));
}
