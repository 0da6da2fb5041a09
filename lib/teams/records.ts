import { ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';
import { type ExpressionValues, getItem, type Stored, type TableKey } from '../db/item.ts';
import { epochSeconds, keys } from '../db/keys.ts';
import { queryAll } from '../db/query.ts';
import type { NamedWrite } from '../db/transact.ts';
import type { PlanName } from '../plans.ts';

/**
 * The records of a team: the team item (profile, plan and suspension, functions enrolment, deletion
 * state) and its slug items (the active slug, and the slugs it renamed away from, retired for a while).
 * A slug is claimed by a conditional write, so two teams never hold one; every deletion state change
 * is one conditional write on the state it leaves.
 */

/** A team as stored (profile fields; the item carries the standing and deletion fields beside them). */
export interface TeamFields {
  id: string;
  name: string;
  slug: string;
  slug_chosen_at: string | null;
  created_at: string;
  updated_at: string;
}

/**
 * The team item: its profile, the standing the operator sets (plan, suspension, functions
 * enrolment) and the deletion state (absent `status` reads `active`); gsi2 lists it in the
 * deletions queue while it is pending deletion.
 */
export type TeamItem = Stored<
  TeamFields & {
    type: 'team';
    plan?: PlanName;
    suspended_at?: string;
    functions_enrolled_at?: string;
    status?: 'active' | 'pending_deletion' | 'purging';
    deletion_requested_at?: string;
    deletion_requested_by?: string;
    purge_after?: string;
    purge_started_at?: string;
    legal_hold?: boolean;
    legal_hold_set_at?: string;
    legal_hold_set_by?: string;
  }
>;

/** A slug's item: which team it names, `active` or `retired` (until `retired_until`). */
export type TeamSlugItem = TableKey & { type: 'team_slug'; team_id: string; state: 'active' | 'retired'; retired_until?: string };

/** The deletions queue of the admin view: teams pending deletion, by deadline (index gsi2). */
const PENDING_DELETIONS = 'PENDINGDELETIONS';

export function getTeamItem(teamId: string, consistent = false): Promise<TeamItem | null> {
  return getItem<TeamItem>(keys.team(teamId), consistent);
}

/** The slug item: which team it names, `active` or `retired` (until `retired_until`). */
export function getTeamSlugItem(slug: string): Promise<TeamSlugItem | null> {
  return getItem<TeamSlugItem>(keys.teamSlug(slug));
}

/** A new team's slug (`slug`: held by another team when it fails) and its item (`team`). */
export function newTeamWrites(team: TeamFields): NamedWrite[] {
  return [
    {
      name: 'slug',
      write: {
        Put: {
          Item: { ...keys.teamSlug(team.slug), type: 'team_slug', team_id: team.id, state: 'active' },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
    },
    {
      name: 'team',
      write: { Put: { Item: { ...keys.team(team.id), type: 'team', ...team }, ConditionExpression: 'attribute_not_exists(pk)' } },
    },
  ];
}

/**
 * A profile change of the team (`team`), on the condition that its slug is still the one read; a new slug
 * is claimed (`slug`: free, expired, or this team's own retired slug) and the old one retired until `retiredUntil`.
 */
export function profileWrites(
  team: TeamFields,
  changes: { name?: string; newSlug?: string; slugChanges: boolean },
  now: Date,
  retiredUntil: Date,
): NamedWrite[] {
  const nowIso = now.toISOString();
  const set: string[] = ['updated_at = :now'];
  const values: ExpressionValues = { ':now': nowIso, ':oldSlug': team.slug };
  if (changes.name !== undefined) {
    set.push('#name = :name');
    values[':name'] = changes.name;
  }
  if (changes.newSlug !== undefined) {
    // Submitting a slug, even the auto-picked one, records that it was chosen.
    set.push('slug = :newSlug', 'slug_chosen_at = :now');
    values[':newSlug'] = changes.newSlug;
  }
  const writes: NamedWrite[] = [
    {
      name: 'team',
      write: {
        Update: {
          Key: keys.team(team.id),
          UpdateExpression: `SET ${set.join(', ')}`,
          ConditionExpression: 'slug = :oldSlug',
          ExpressionAttributeNames: changes.name !== undefined ? { '#name': 'name' } : undefined,
          ExpressionAttributeValues: values,
        },
      },
    },
  ];
  if (!changes.slugChanges || changes.newSlug === undefined) return writes;
  const retired = { state: 'retired', retired_until: retiredUntil.toISOString(), ttl: epochSeconds(retiredUntil) };
  writes.push(
    {
      name: 'slug',
      write: {
        Put: {
          Item: { ...keys.teamSlug(changes.newSlug), type: 'team_slug', team_id: team.id, state: 'active' },
          ConditionExpression: 'attribute_not_exists(pk) OR team_id = :team OR retired_until < :now',
          ExpressionAttributeValues: { ':team': team.id, ':now': nowIso },
        },
      },
    },
    {
      name: 'old_slug',
      write: {
        Put: {
          Item: { ...keys.teamSlug(team.slug), type: 'team_slug', team_id: team.id, ...retired },
          ConditionExpression: 'team_id = :team',
          ExpressionAttributeValues: { ':team': team.id },
        },
      },
    },
  );
  return writes;
}

/** One conditional update of an existing team item; its attributes after the update. */
async function updateTeam(teamId: string, update: { expression: string; names?: Record<string, string>; values?: ExpressionValues }) {
  const reply = await dynamo().send(
    new UpdateCommand({
      TableName: config.tableName(),
      Key: keys.team(teamId),
      UpdateExpression: update.expression,
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: update.names,
      ExpressionAttributeValues: update.values,
      ReturnValues: 'ALL_NEW',
    }),
  );
  return (reply.Attributes ?? {}) as Partial<TeamItem>;
}

export function writePlan(teamId: string, plan: PlanName) {
  return updateTeam(teamId, {
    expression: 'SET #plan = :plan, updated_at = :now',
    names: { '#plan': 'plan' },
    values: { ':plan': plan, ':now': new Date().toISOString() },
  });
}

/** Suspends a team (the first suspension time stands), or lifts the suspension. */
export function writeSuspended(teamId: string, suspended: boolean) {
  return suspended
    ? updateTeam(teamId, {
        expression: 'SET suspended_at = if_not_exists(suspended_at, :now)',
        values: { ':now': new Date().toISOString() },
      })
    : updateTeam(teamId, { expression: 'REMOVE suspended_at' });
}

/** Enrols a team in the functions beta (the first enrolment time stands), or ends its enrolment. */
export function writeFunctionsEnrolment(teamId: string, enrolled: boolean) {
  return enrolled
    ? updateTeam(teamId, {
        expression: 'SET functions_enrolled_at = if_not_exists(functions_enrolled_at, :now)',
        values: { ':now': new Date().toISOString() },
      })
    : updateTeam(teamId, { expression: 'REMOVE functions_enrolled_at' });
}

/** A conditional update of the team's deletion state; false when its condition did not hold. */
async function moveDeletionState(teamId: string, update: Omit<ConstructorParameters<typeof UpdateCommand>[0], 'TableName' | 'Key'>) {
  try {
    const reply = await dynamo().send(new UpdateCommand({ TableName: config.tableName(), Key: keys.team(teamId), ...update }));
    return (reply.Attributes ?? {}) as Partial<TeamItem>;
  } catch (error) {
    if (isConditionalCheckFailure(error)) return null;
    throw error;
  }
}

/** An active team becomes `pending_deletion` until `purgeAfter`, listed in the deletions queue; false otherwise. */
export async function markPendingDeletion(teamId: string, userId: string, now: Date, purgeAfter: string): Promise<boolean> {
  const moved = await moveDeletionState(teamId, {
    UpdateExpression:
      'SET #status = :pending, deletion_requested_at = :now, deletion_requested_by = :user, purge_after = :purge, ' +
      'gsi2pk = :queue, gsi2sk = :sort, updated_at = :now',
    ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(#status) OR #status = :active)',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: {
      ':pending': 'pending_deletion',
      ':active': 'active',
      ':now': now.toISOString(),
      ':user': userId,
      ':purge': purgeAfter,
      ':queue': PENDING_DELETIONS,
      ':sort': `${purgeAfter}#${teamId}`,
    },
  });
  return moved !== null;
}

/** A team pending deletion is `active` again; false when it was not pending. */
export async function clearPendingDeletion(teamId: string, now: Date): Promise<boolean> {
  const moved = await moveDeletionState(teamId, {
    UpdateExpression:
      'SET #status = :active, updated_at = :now REMOVE deletion_requested_at, deletion_requested_by, purge_after, gsi2pk, gsi2sk',
    ConditionExpression: '#status = :pending',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: { ':active': 'active', ':pending': 'pending_deletion', ':now': now.toISOString() },
  });
  return moved !== null;
}

/** Sets or clears the legal hold; null for a team already purging (or none). A purge past stopping refuses the hold. */
/** A team item as its legal hold's write returns it (ALL_NEW: the whole item, with the hold just set). */
export type HeldTeamItem = TeamItem & Required<Pick<TeamItem, 'legal_hold_set_at' | 'legal_hold_set_by'>>;

export async function writeLegalHold(teamId: string, hold: boolean, adminUserId: string, now: Date): Promise<HeldTeamItem | null> {
  return (await moveDeletionState(teamId, {
    UpdateExpression: 'SET legal_hold = :hold, legal_hold_set_at = :now, legal_hold_set_by = :admin',
    ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(#status) OR #status <> :purging)',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: { ':hold': hold, ':now': now.toISOString(), ':admin': adminUserId, ':purging': 'purging' },
    ReturnValues: 'ALL_NEW',
  })) as HeldTeamItem | null;
}

/** The purge claims a team pending deletion past its deadline and not held (`purging`); false otherwise. */
export async function claimPurge(teamId: string, now: Date): Promise<boolean> {
  const moved = await moveDeletionState(teamId, {
    UpdateExpression: 'SET #status = :purging, purge_started_at = :now',
    ConditionExpression: '#status = :pending AND purge_after <= :now AND (attribute_not_exists(legal_hold) OR legal_hold = :false)',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: { ':purging': 'purging', ':pending': 'pending_deletion', ':now': now.toISOString(), ':false': false },
  });
  return moved !== null;
}

/** A team in the deletions queue: the index lists only teams whose request set both times. */
export type PendingDeletionItem = TeamItem & Required<Pick<TeamItem, 'deletion_requested_at' | 'purge_after'>>;

/** Teams pending deletion, earliest deadline first (one index query). */
export function pendingDeletionItems(): Promise<PendingDeletionItem[]> {
  return queryAll<PendingDeletionItem>({
    TableName: config.tableName(),
    IndexName: 'gsi2',
    KeyConditionExpression: 'gsi2pk = :queue',
    ExpressionAttributeValues: { ':queue': PENDING_DELETIONS },
  });
}

/** The keys of every item in the team's partition (the team, memberships, invitations, feedback, counters, ...). */
export function teamPartitionKeys(teamId: string): Promise<TableKey[]> {
  return queryAll<TableKey>({
    TableName: config.tableName(),
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.team(teamId).pk },
    ProjectionExpression: 'pk, sk',
    ConsistentRead: true,
  });
}

/** The keys of the team's weekly functions telemetry items. */
export function functionStatsKeys(teamId: string): Promise<TableKey[]> {
  return queryAll<TableKey>({
    TableName: config.tableName(),
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.functionStatsWeek(teamId, '').pk },
    ProjectionExpression: 'pk, sk',
  });
}

/**
 * One page of every team item, by a scan of the whole table: for operator commands only (the
 * attention backfill), never on a request path.
 */
export async function scanTeamItemsPage(startKey?: TableKey): Promise<{ items: TeamItem[]; lastKey: TableKey | undefined }> {
  const page = await dynamo().send(
    new ScanCommand({
      TableName: config.tableName(),
      FilterExpression: 'sk = :team',
      ExpressionAttributeValues: { ':team': 'TEAM' },
      ExclusiveStartKey: startKey,
    }),
  );
  // A scan of the table (no index) pages by the table's key.
  return { items: (page.Items ?? []) as TeamItem[], lastKey: page.LastEvaluatedKey as TableKey | undefined };
}
