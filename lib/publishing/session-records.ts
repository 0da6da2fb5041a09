import { config } from '../config.ts';
import { getItem, type Stored } from '../db/item.ts';
import { epochSeconds, keys } from '../db/keys.ts';
import { queryAll } from '../db/query.ts';
import type { NamedWrite } from '../db/transact.ts';
import { SESSION_RETENTION_SECONDS } from './received.ts';
import type { UploadSessionRecord } from '../deployments/session-record.ts';

/**
 * The records of upload sessions: each session's item (open, then finalized once), and the team's
 * upload slots, one versioned item naming each open session that takes a place among the plan's
 * open sessions with its expiry. A slot is taken with the session, optimistically on the version
 * read, and freed when the session closes.
 */

/** A session's item: its record, its keys (the project's index partition) and when DynamoDB may remove it. */
export type StoredSession = Stored<UploadSessionRecord & { type: 'upload_session'; ttl: number }>;

export function getSessionItem(uploadId: string): Promise<StoredSession | null> {
  return getItem<StoredSession>(keys.uploadSession(uploadId), true);
}

/** Every session a project opened, from the project's index partition. */
export function projectSessionItems(projectId: string): Promise<StoredSession[]> {
  return queryAll<StoredSession>({
    TableName: config.tableName(),
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.uploadSessionByProject(projectId, '', '').gsi1pk },
  });
}

/** The new session's item (`session`), kept until a while after it expires. */
export function sessionPut(record: UploadSessionRecord, expiresEpoch: number): NamedWrite {
  return {
    name: 'session',
    write: {
      Put: {
        Item: {
          ...keys.uploadSession(record.upload_id),
          ...keys.uploadSessionByProject(record.project_id, record.created_at, record.upload_id),
          type: 'upload_session',
          ...record,
          ttl: expiresEpoch + SESSION_RETENTION_SECONDS,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
  };
}

/** The session closes, once (`session`): finalized at `now`, with an outcome when it published nothing. */
export function sessionClose(uploadId: string, now: string, outcome?: 'failed'): NamedWrite {
  return {
    name: 'session',
    write: {
      Update: {
        Key: keys.uploadSession(uploadId),
        UpdateExpression: `SET #status = :finalized, finalized_at = :now${outcome ? ', outcome = :outcome' : ''}`,
        ConditionExpression: '#status = :open',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':finalized': 'finalized', ':open': 'open', ':now': now, ...(outcome ? { ':outcome': outcome } : {}) },
      },
    },
  };
}

/** The team's open sessions as last written (`version`: null before its first) and those not yet expired. */
export interface Slots {
  version: number | null;
  live: Record<string, number>;
}

/** The team's upload slots item: each open session's id with the epoch second it expires, and the item's version. */
type SlotsItem = { slots: Record<string, number>; version: number };

export async function readSlots(teamId: string): Promise<Slots> {
  const item = await getItem<SlotsItem>(keys.teamUploadSlots(teamId), true);
  const now = epochSeconds(new Date());
  const live = Object.fromEntries(Object.entries(item?.slots ?? {}).filter(([, expires]) => expires > now));
  return { version: item?.version ?? null, live };
}

/**
 * The slots item with one more session (`slots`), written only if nobody changed it since it was read
 * (an optimistic version), so racing begins cannot exceed the cap.
 */
export function slotTake(teamId: string, slots: Slots, uploadId: string, expiresEpoch: number): NamedWrite {
  return {
    name: 'slots',
    write: {
      Put: {
        Item: {
          ...keys.teamUploadSlots(teamId),
          type: 'upload_slots',
          slots: { ...slots.live, [uploadId]: expiresEpoch },
          version: (slots.version ?? 0) + 1,
        },
        ConditionExpression: slots.version === null ? 'attribute_not_exists(pk)' : 'version = :v',
        ExpressionAttributeValues: slots.version === null ? undefined : { ':v': slots.version },
      },
    },
  };
}

/** Frees the places of closed sessions among the team's open ones (`slots`); nothing for none. */
export function slotsRelease(teamId: string, uploadIds: string[], options: { whereHeld?: boolean } = {}): NamedWrite[] {
  if (uploadIds.length === 0) return [];
  return [
    {
      name: 'slots',
      write: {
        Update: {
          Key: keys.teamUploadSlots(teamId),
          UpdateExpression: `REMOVE ${uploadIds.map((_, i) => `slots.#u${i}`).join(', ')} SET version = if_not_exists(version, :zero) + :one`,
          ...(options.whereHeld ? { ConditionExpression: 'attribute_exists(slots)' } : {}),
          ExpressionAttributeNames: Object.fromEntries(uploadIds.map((id, i) => [`#u${i}`, id])),
          ExpressionAttributeValues: { ':zero': 0, ':one': 1 },
        },
      },
    },
  ];
}
