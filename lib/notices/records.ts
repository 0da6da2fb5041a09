import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';
import { keys } from '../db/keys.ts';
import { queryAll } from '../db/query.ts';
import { getItem, type Stored } from '../db/item.ts';
import type { TeamRole } from '../access/rules.ts';

/**
 * The records of notices: the catalogue (one item per key, indexed by publication time), each person's
 * watermark (what they have seen, moved only forward) and their dismissals per team (the first stands).
 */

/** A notice of the catalogue, published by an operator (`admin publish-notice`). */
export interface Notice {
  key: string;
  title: string;
  body: string | null;
  published_at: string;
  expires_at: string | null;
  /** Lowest team role that sees the notice; null for every member. */
  min_role: TeamRole | null;
  created_at: string;
}

/** A notice's item: the notice, under its key and in the catalogue index by publication time. */
export type NoticeItem = Stored<Notice & { type: 'notice' }>;

/** Adds a notice to the catalogue; false when its key names one already (a key names one notice forever). */
export async function insertNotice(notice: Notice): Promise<boolean> {
  try {
    await dynamo().send(
      new PutCommand({
        TableName: config.tableName(),
        Item: { ...keys.notice(notice.key), ...keys.noticeCatalogue(notice.published_at, notice.key), type: 'notice', ...notice },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return true;
  } catch (error) {
    if (isConditionalCheckFailure(error)) return false;
    throw error;
  }
}

export function getNoticeItem(key: string): Promise<NoticeItem | null> {
  return getItem<NoticeItem>(keys.notice(key));
}

/** Notice items published up to `now`, newest first, from the catalogue index (never a scan). */
export function publishedNoticeItems(now: Date): Promise<NoticeItem[]> {
  return queryAll<NoticeItem>({
    TableName: config.tableName(),
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk <= :upTo',
    // '~' sorts after '#' and every key character: everything published at or before now.
    ExpressionAttributeValues: { ':pk': 'NOTICES', ':upTo': `${now.toISOString()}~` },
    ScanIndexForward: false,
  });
}

/** The keys of the notices a person dismissed in a team. */
export async function dismissedKeys(userId: string, teamId: string): Promise<Set<string>> {
  const prefix = keys.noticeDismissal(userId, teamId, '').sk;
  const items = await queryAll<{ notice_key: string }>({
    TableName: config.tableName(),
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.noticeWatermark(userId).pk, ':prefix': prefix },
    ProjectionExpression: 'notice_key',
  });
  return new Set(items.map((item) => item.notice_key));
}

export async function getWatermark(userId: string): Promise<string | null> {
  const result = await dynamo().send(
    new GetCommand({ TableName: config.tableName(), Key: keys.noticeWatermark(userId), ConsistentRead: true }),
  );
  return (result.Item?.seen_at as string | undefined) ?? null;
}

/** Moves the watermark forward to `value` (an ISO time); false when the stored one is already at or past it. */
export async function advanceWatermark(userId: string, value: string, now: Date): Promise<boolean> {
  try {
    await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.noticeWatermark(userId),
        UpdateExpression: 'SET seen_at = :new, #type = :type, updated_at = :now',
        ConditionExpression: 'attribute_not_exists(seen_at) OR seen_at < :new',
        ExpressionAttributeNames: { '#type': 'type' },
        ExpressionAttributeValues: { ':new': value, ':type': 'notice_watermark', ':now': now.toISOString() },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionalCheckFailure(error)) return false;
    throw error;
  }
}

/** Records a dismissal; when one exists already, the time it was made (the first stands). */
export async function insertDismissal(userId: string, teamId: string, key: string, dismissedAt: string): Promise<string> {
  const item = {
    ...keys.noticeDismissal(userId, teamId, key),
    type: 'notice_dismissal',
    user_id: userId,
    team_id: teamId,
    notice_key: key,
  };
  try {
    await dynamo().send(
      new PutCommand({
        TableName: config.tableName(),
        Item: { ...item, dismissed_at: dismissedAt },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return dismissedAt;
  } catch (error) {
    if (!isConditionalCheckFailure(error)) throw error;
    const existing = await dynamo().send(
      new GetCommand({ TableName: config.tableName(), Key: keys.noticeDismissal(userId, teamId, key), ConsistentRead: true }),
    );
    return (existing.Item?.dismissed_at as string | undefined) ?? dismissedAt;
  }
}
