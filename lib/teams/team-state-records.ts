import { PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';
import { type ExpressionValues, getItem, type Stored, type TableKey } from '../db/item.ts';
import { keys } from '../db/keys.ts';
import { type NamedWrite, TransactionRefused, transact } from '../db/transact.ts';
import type { PlanName } from '../plans.ts';

/**
 * The records of a team's attention state (lib/attention/team-state.ts decides what it holds): one
 * item per team (`TEAM#{id}` / `ATTENTION`), in the stuck-activation index (gsi1 `STUCKACTIVATION`,
 * by the team's creation) until its first successful publish, and in its billing bucket (gsi2
 * `BILLING#{bucket}`) while it has one. Changes that move the bucket are written on condition of the
 * `version` read; counters are single atomic writes.
 */

export type BillingBucket = 'CANCELLING' | 'PAST_DUE' | 'PENDING_PAYMENT' | 'PAYING';

export const SUBSCRIPTION_STATUSES = ['active', 'trialing', 'past_due', 'unpaid', 'incomplete', 'incomplete_expired', 'canceled'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

/**
 * A team's attention item. A team created before the item existed has one only once a subscription is set for it
 * (type, team_id, version and the `sub_*` attributes); the activation attributes are those of newTeamAttentionItem.
 */
export type TeamAttentionItem = Stored<{
  type: 'team_attention';
  team_id: string;
  team_created_at?: string;
  deploy_attempts?: number;
  latest_failure_reason?: string | null;
  last_activity_at?: string;
  last_successful_deploy_at?: string | null;
  activated_at?: string;
  /** The write count that versioned writes are conditional on (absent on an item from before versions). */
  version?: number;
  sub_plan?: PlanName;
  sub_status?: SubscriptionStatus;
  sub_cancel_at_period_end?: boolean;
  sub_created_at?: string;
  sub_updated_at?: string;
  /** When the billing provider made the event last applied (older events are dropped). */
  sub_source_event_at?: string;
  subscription_count?: number;
}>;

/** An item of the stuck-activation index: written with its team, so it has the activation attributes. */
export type StuckAttentionItem = TeamAttentionItem & Required<Pick<TeamAttentionItem, 'team_created_at' | 'last_activity_at'>>;

/** An item of a billing bucket: only a subscription puts it there. */
export type BilledAttentionItem = TeamAttentionItem &
  Required<Pick<TeamAttentionItem, 'sub_plan' | 'sub_status' | 'sub_created_at' | 'sub_updated_at'>>;

/** A new team's attention item: in the stuck-activation index from its creation. */
export function newTeamAttentionItem(teamId: string, createdAt: string): StuckAttentionItem {
  return {
    ...keys.teamAttention(teamId),
    ...keys.stuckActivation(createdAt, teamId),
    type: 'team_attention',
    team_id: teamId,
    team_created_at: createdAt,
    deploy_attempts: 0,
    latest_failure_reason: null,
    last_activity_at: createdAt,
    last_successful_deploy_at: null,
    version: 0,
  };
}

/** A new team's attention item (`attention`), written with the team. */
export function newTeamAttention(teamId: string, createdAt: string): NamedWrite {
  return { name: 'attention', write: { Put: { Item: newTeamAttentionItem(teamId, createdAt) } } };
}

/**
 * The item of a team created before the item existed (the backfill): activated at `lastDeploy` when it
 * has one, else stuck. False when the team has its item already.
 */
export async function insertTeamAttention(teamId: string, createdAt: string, lastDeploy: string | null): Promise<boolean> {
  const item = newTeamAttentionItem(teamId, createdAt);
  if (lastDeploy) {
    delete item.gsi1pk;
    delete item.gsi1sk;
    Object.assign(item, { last_successful_deploy_at: lastDeploy, activated_at: lastDeploy, last_activity_at: lastDeploy });
  }
  try {
    await dynamo().send(new PutCommand({ TableName: config.tableName(), Item: item, ConditionExpression: 'attribute_not_exists(pk)' }));
    return true;
  } catch (error) {
    if (isConditionalCheckFailure(error)) return false;
    throw error;
  }
}

export async function getTeamAttention(teamId: string): Promise<TeamAttentionItem | undefined> {
  return (await getItem<TeamAttentionItem>(keys.teamAttention(teamId), true)) ?? undefined;
}

/** A change of the item as read: the attributes to set and remove, and the billing bucket it ends in (null: none). */
export interface AttentionChange {
  set: Partial<TeamAttentionItem>;
  remove: string[];
  bucket: { name: BillingBucket; sort: string } | null;
}

/** A marker item written with a change, at most once: its existing refuses the change with `refusal`. */
export interface OnceMarker {
  item: TableKey;
  refusal: () => Error;
}

/** The gsi2 keys of a billing bucket: `sort` orders the bucket's teams. */
export const bucketKeys = (teamId: string, bucket: AttentionChange['bucket']) =>
  bucket ? keys.billingBucket(bucket.name, bucket.sort, teamId) : null;

/**
 * Writes `change` (with the next `version`) on condition that the item is still as `read` (absent, or
 * at its version). False when another write changed it first. With `once`, the marker is put in the
 * same transaction on condition that it does not exist yet; when it does, its refusal is thrown.
 */
export async function writeAttentionChange(
  teamId: string,
  read: TeamAttentionItem | undefined,
  change: AttentionChange,
  once?: OnceMarker,
): Promise<boolean> {
  const version = read?.version ?? 0;
  const names: Record<string, string> = {};
  const values: ExpressionValues = {};
  const sets: string[] = [];
  let n = 0;
  const setAttr = (name: string, value: unknown) => {
    names[`#a${n}`] = name;
    values[`:v${n}`] = value;
    sets.push(`#a${n} = :v${n}`);
    n++;
  };
  for (const [name, value] of Object.entries(change.set)) setAttr(name, value);
  setAttr('version', version + 1);
  if (!read) {
    setAttr('type', 'team_attention');
    setAttr('team_id', teamId);
  }
  const bucket = bucketKeys(teamId, change.bucket);
  if (bucket) {
    setAttr('gsi2pk', bucket.gsi2pk);
    setAttr('gsi2sk', bucket.gsi2sk);
  }
  const removes = [...change.remove, ...(bucket ? [] : ['gsi2pk', 'gsi2sk'])];
  const versioned = typeof read?.version === 'number';
  if (versioned) values[':read'] = version;
  const update = {
    Key: keys.teamAttention(teamId),
    UpdateExpression: `SET ${sets.join(', ')}${removes.length > 0 ? ` REMOVE ${removes.join(', ')}` : ''}`,
    ConditionExpression: !read ? 'attribute_not_exists(pk)' : versioned ? '#version = :read' : 'attribute_not_exists(#version)',
    ExpressionAttributeNames: read ? { ...names, '#version': 'version' } : names,
    ExpressionAttributeValues: values,
  };
  try {
    if (once) {
      await transact([
        { name: 'attention', write: { Update: update } },
        { name: 'once', write: { Put: { Item: once.item, ConditionExpression: 'attribute_not_exists(pk)' } }, refusal: once.refusal },
      ]);
    } else {
      await dynamo().send(new UpdateCommand({ TableName: config.tableName(), ...update }));
    }
    return true;
  } catch (error) {
    // A cancelled transaction whose marker was free lost the version race (or a concurrent transaction).
    if (isConditionalCheckFailure(error) || error instanceof TransactionRefused) return false;
    throw error;
  }
}

/** One atomic update of a team that has the item; a team without one (created before it existed) is left alone. */
async function updateIfPresent(teamId: string, expression: string, values: ExpressionValues): Promise<void> {
  try {
    await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.teamAttention(teamId),
        UpdateExpression: expression,
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: values,
      }),
    );
  } catch (error) {
    if (!isConditionalCheckFailure(error)) throw error;
  }
}

/** One more deploy attempt, and the team's last activity. */
export const addDeployAttempt = (teamId: string, at: string) =>
  updateIfPresent(teamId, 'ADD deploy_attempts :one SET last_activity_at = :now', { ':one': 1, ':now': at });

/** The latest failure reason, and the team's last activity. */
export const setLatestFailure = (teamId: string, reason: string, at: string) =>
  updateIfPresent(teamId, 'SET latest_failure_reason = :reason, last_activity_at = :now', { ':reason': reason, ':now': at });

async function indexPartition<T extends TeamAttentionItem>(input: {
  index: 'gsi1' | 'gsi2';
  pk: string;
  before?: string;
  newestFirst?: boolean;
  limit: number;
}): Promise<T[]> {
  const pkName = `${input.index}pk`;
  const skName = `${input.index}sk`;
  const reply = await dynamo().send(
    new QueryCommand({
      TableName: config.tableName(),
      IndexName: input.index,
      KeyConditionExpression: input.before ? `${pkName} = :pk AND ${skName} < :before` : `${pkName} = :pk`,
      ExpressionAttributeValues: { ':pk': input.pk, ...(input.before ? { ':before': input.before } : {}) },
      ScanIndexForward: !input.newestFirst,
      Limit: input.limit,
    }),
  );
  return (reply.Items ?? []) as T[];
}

/** Attention items of teams created before `before` that never published, newest sign-ups first. */
export const stuckTeams = (before: string, limit: number) =>
  indexPartition<StuckAttentionItem>({ index: 'gsi1', pk: keys.stuckActivation('', '').gsi1pk, before, newestFirst: true, limit });

/** Attention items of a billing bucket, in its order (only those sorting before `before`, when given). */
export const billingBucketTeams = (bucket: BillingBucket, limit: number, before?: string) =>
  indexPartition<BilledAttentionItem>({ index: 'gsi2', pk: keys.billingBucket(bucket, '', '').gsi2pk, before, limit });
