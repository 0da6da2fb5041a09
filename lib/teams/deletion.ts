import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { deleteOneTimeSchedule, setOneTimeSchedule } from '../aws/schedules.ts';
import { config } from '../config.ts';
import { batchWriteAll } from '../db/batch.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';
import { keys } from '../db/keys.ts';
import { queryAll } from '../db/query.ts';
import { ApiError } from '../errors/api-error.ts';
import { CONFLICT, TEAM_NOT_FOUND } from '../errors/catalogue.ts';
import { removeProject } from '../projects/deletion.ts';
import { deleteTeamCredentials } from '../identity/credentials.ts';

/**
 * A team's deletion (spec: Team deletion and legal hold). The owner asks for
 * it: the team is `pending_deletion` with a purge deadline (`purge_after`), and
 * a one-time schedule wakes the purge worker then. A platform administrator's
 * legal hold blocks the purge: the worker never claims a held team, and a held
 * team past its deadline is listed as overdue in the deletions queue. Lifting
 * the hold of an overdue team wakes the worker at once.
 *
 * Every state change is one conditional write; the purge claims the team with
 * one (`pending_deletion`, not held, deadline passed -> `purging`), so a hold
 * set at the same moment either lands first (no purge) or finds it purging.
 */

export const DEFAULT_TEAM_PURGE_DAYS = 30;
export const TEAM_PURGE_TARGET_ARN_ENV = 'TEAM_PURGE_TARGET_ARN';
/** The deletions queue of the admin view: teams pending deletion, by deadline (index gsi2). */
const PENDING_DELETIONS = 'PENDINGDELETIONS';

/** Seconds from the request to the purge: 30 days, or `TEAM_PURGE_DELAY_SECONDS` (tests). */
export function teamPurgeDelaySeconds(): number {
  const value = Number(process.env.TEAM_PURGE_DELAY_SECONDS);
  return Number.isFinite(value) && value > 0 ? value : DEFAULT_TEAM_PURGE_DAYS * 86_400;
}

export const teamPurgeScheduleName = (teamId: string) => `team-purge-${teamId}`;

export interface TeamPurgeInput {
  team_id: string;
}

export interface TeamDeletionState {
  team_id: string;
  status: 'active' | 'pending_deletion' | 'purging';
  deletion_requested_at: string | null;
  purge_after: string | null;
  legal_hold: boolean;
}

function stateOf(item: Record<string, unknown>): TeamDeletionState {
  return {
    team_id: item.id as string,
    status: (item.status as TeamDeletionState['status'] | undefined) ?? 'active',
    deletion_requested_at: (item.deletion_requested_at as string | undefined) ?? null,
    purge_after: (item.purge_after as string | undefined) ?? null,
    legal_hold: item.legal_hold === true,
  };
}

async function teamItem(teamId: string): Promise<Record<string, unknown> | null> {
  return (
    ((await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.team(teamId), ConsistentRead: true }))).Item as Record<
      string,
      unknown
    >) ?? null
  );
}

/** The owner's request: `pending_deletion` until `purge_after`. Asking again keeps the first deadline. */
export async function requestTeamDeletion(teamId: string, userId: string, now = new Date()): Promise<TeamDeletionState> {
  const purgeAfter = new Date(now.getTime() + teamPurgeDelaySeconds() * 1000).toISOString();
  try {
    await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.team(teamId),
        UpdateExpression:
          'SET #status = :pending, deletion_requested_at = :now, deletion_requested_by = :user, purge_after = :purge, gsi2pk = :queue, gsi2sk = :sort, updated_at = :now',
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
      }),
    );
  } catch (error) {
    if (!isConditionalCheckFailure(error)) throw error;
    const item = await teamItem(teamId);
    if (!item) throw new ApiError(TEAM_NOT_FOUND);
    // Already pending: the first request's deadline stands.
    if (item.status === 'pending_deletion') return stateOf(item);
    throw new ApiError(CONFLICT, { message: 'The team is being purged.' });
  }
  await setOneTimeSchedule(teamPurgeScheduleName(teamId), new Date(purgeAfter), TEAM_PURGE_TARGET_ARN_ENV, {
    team_id: teamId,
  } satisfies TeamPurgeInput);
  return stateOf((await teamItem(teamId))!);
}

/** The owner takes the request back before the purge started. */
export async function cancelTeamDeletion(teamId: string, now = new Date()): Promise<TeamDeletionState> {
  try {
    await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.team(teamId),
        UpdateExpression:
          'SET #status = :active, updated_at = :now REMOVE deletion_requested_at, deletion_requested_by, purge_after, gsi2pk, gsi2sk',
        ConditionExpression: '#status = :pending',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':active': 'active', ':pending': 'pending_deletion', ':now': now.toISOString() },
      }),
    );
  } catch (error) {
    if (!isConditionalCheckFailure(error)) throw error;
    const item = await teamItem(teamId);
    if (!item) throw new ApiError(TEAM_NOT_FOUND);
    throw new ApiError(CONFLICT, {
      message: item.status === 'purging' ? 'The team is being purged.' : 'The team has no deletion request to cancel.',
    });
  }
  await deleteOneTimeSchedule(teamPurgeScheduleName(teamId));
  return stateOf((await teamItem(teamId))!);
}

/** POST /api/v1/admin/teams/{id}/legal-hold: sets or clears the block on the purge. */
export async function setLegalHold(
  teamId: string,
  hold: boolean,
  adminUserId: string,
  now = new Date(),
): Promise<TeamDeletionState & { legal_hold_set_at: string; legal_hold_set_by: string }> {
  let item: Record<string, unknown>;
  try {
    item = (
      await dynamo().send(
        new UpdateCommand({
          TableName: config.tableName(),
          Key: keys.team(teamId),
          UpdateExpression: 'SET legal_hold = :hold, legal_hold_set_at = :now, legal_hold_set_by = :admin',
          // A purge that already claimed the team is past stopping: the hold is refused rather than silently lost.
          ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(#status) OR #status <> :purging)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':hold': hold, ':now': now.toISOString(), ':admin': adminUserId, ':purging': 'purging' },
          ReturnValues: 'ALL_NEW',
        }),
      )
    ).Attributes as Record<string, unknown>;
  } catch (error) {
    if (!isConditionalCheckFailure(error)) throw error;
    if (!(await teamItem(teamId))) throw new ApiError(TEAM_NOT_FOUND);
    throw new ApiError(CONFLICT, { message: 'The team is being purged.' });
  }
  // Lifted on a team past its deadline: the purge it missed runs now.
  if (
    !hold &&
    item.status === 'pending_deletion' &&
    typeof item.purge_after === 'string' &&
    Date.parse(item.purge_after) <= now.getTime()
  ) {
    await setOneTimeSchedule(teamPurgeScheduleName(teamId), now, TEAM_PURGE_TARGET_ARN_ENV, { team_id: teamId } satisfies TeamPurgeInput);
  }
  return { ...stateOf(item), legal_hold_set_at: item.legal_hold_set_at as string, legal_hold_set_by: item.legal_hold_set_by as string };
}

export interface PendingDeletion {
  team_id: string;
  team_name: string;
  deletion_requested_at: string;
  purge_after: string;
  legal_hold: boolean;
  /** Past its deadline and still here: held, or the purge has not run yet. */
  overdue: boolean;
}

/** GET /api/v1/admin/deletions: teams pending deletion, earliest deadline first (one index query). */
export async function listPendingDeletions(now = new Date()): Promise<PendingDeletion[]> {
  const items = await queryAll({
    TableName: config.tableName(),
    IndexName: 'gsi2',
    KeyConditionExpression: 'gsi2pk = :queue',
    ExpressionAttributeValues: { ':queue': PENDING_DELETIONS },
  });
  return items.map((item) => ({
    team_id: item.id as string,
    team_name: item.name as string,
    deletion_requested_at: item.deletion_requested_at as string,
    purge_after: item.purge_after as string,
    legal_hold: item.legal_hold === true,
    overdue: Date.parse(item.purge_after as string) <= now.getTime(),
  }));
}

export type PurgeOutcome = 'purged' | 'held' | 'early' | 'kept' | 'gone';

/**
 * The purge worker's job: deletes a team past its deadline that is not held,
 * with its projects (as a deleted project is removed), memberships,
 * invitations, feedback, counters, functions telemetry and slug, then the team.
 */
export async function purgeTeam(teamId: string, now = new Date()): Promise<PurgeOutcome> {
  const table = config.tableName();
  const item = await teamItem(teamId);
  if (!item) return 'gone';
  if (item.status === 'pending_deletion') {
    if (item.legal_hold === true) return 'held';
    if (typeof item.purge_after !== 'string' || Date.parse(item.purge_after) > now.getTime()) return 'early';
    try {
      await dynamo().send(
        new UpdateCommand({
          TableName: table,
          Key: keys.team(teamId),
          UpdateExpression: 'SET #status = :purging, purge_started_at = :now',
          ConditionExpression: '#status = :pending AND purge_after <= :now AND (attribute_not_exists(legal_hold) OR legal_hold = :false)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':purging': 'purging', ':pending': 'pending_deletion', ':now': now.toISOString(), ':false': false },
        }),
      );
    } catch (error) {
      if (isConditionalCheckFailure(error)) return 'held';
      throw error;
    }
  } else if (item.status !== 'purging') {
    return 'kept';
  }
  // From here the team is ours to delete; a retry after a crash resumes at this point.
  // Its API keys and the sessions opened for it go first: nothing acts in a team being purged.
  await deleteTeamCredentials(teamId);
  const projects = await queryAll({
    TableName: table,
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.projectByTeam(teamId, '', '').gsi1pk },
  });
  for (const listed of projects) {
    const projectId = listed.id as string;
    const project = (await dynamo().send(new GetCommand({ TableName: table, Key: keys.project(projectId), ConsistentRead: true }))).Item;
    if (!project) continue;
    if (project.status !== 'deleting') {
      await dynamo().send(
        new UpdateCommand({
          TableName: table,
          Key: keys.project(projectId),
          UpdateExpression: 'SET #status = :deleting, deletion_requested_at = if_not_exists(deletion_requested_at, :now)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':deleting': 'deleting', ':now': now.toISOString() },
        }),
      );
    }
    await removeProject(project);
  }
  const owned = await queryAll({
    TableName: table,
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.team(teamId).pk },
    ProjectionExpression: 'pk, sk',
    ConsistentRead: true,
  });
  const stats = await queryAll({
    TableName: table,
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.functionStatsWeek(teamId, '').pk },
    ProjectionExpression: 'pk, sk',
  });
  const gone = [
    ...owned.filter((o) => o.sk !== 'TEAM'),
    // Each feedback's reference by id (lib/privacy/records.ts createFeedback) lives outside the team's partition.
    ...owned
      .filter((o) => typeof o.sk === 'string' && o.sk.startsWith('FEEDBACK#'))
      .map((o) => keys.feedbackRef((o.sk as string).slice('FEEDBACK#'.length))),
    ...stats,
    ...(typeof item.slug === 'string' ? [keys.teamSlug(item.slug)] : []),
  ].map((k) => ({ DeleteRequest: { Key: { pk: k.pk as string, sk: k.sk as string } } }));
  await batchWriteAll(gone);
  // The team item last: until it goes, a retry finds the team `purging` and finishes the job.
  await batchWriteAll([{ DeleteRequest: { Key: keys.team(teamId) } }]);
  await deleteOneTimeSchedule(teamPurgeScheduleName(teamId)).catch(() => undefined);
  return 'purged';
}
