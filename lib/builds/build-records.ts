import { DeleteCommand, GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { conditionFailedAt, isConditionalCheckFailure, isTransactionCanceled } from '../db/errors.ts';
import { epochSeconds, keys } from '../db/keys.ts';
import { type ExpressionValues, getItem, type TableKey } from '../db/item.ts';
import { queryAll } from '../db/query.ts';
import type { DeploymentItem } from '../deployments/records.ts';
import { setFields } from '../db/set-fields.ts';
import { logger } from '../logger.ts';
import type { BuildTarget, BuildTrigger } from './events.ts';

/**
 * The build fields of a deployment (docs/builds.md): a build is a deployment
 * item with a trigger, a branch and a commit, moving through `queued`,
 * `building`, then `ready`, `failed` or `canceled` (or recorded `skipped`).
 * Every move is a conditional write on the state it leaves, so a redelivered
 * queue message, a racing cancel or a second worker never moves it twice.
 * The newest build of each branch (and merge request) is a pointer item: a
 * newer build takes it over with a condition on the one it replaces, and
 * cancels that one.
 */
import type { BuildStatus } from '../deployments/records.ts';
export type { BuildStatus };

export interface NewBuild {
  projectId: string;
  teamId: string;
  deploymentId: string;
  trigger: BuildTrigger;
  target: BuildTarget;
  branch: string;
  commitSha: string | null;
  commitMessage: string | null;
  /** The preview host label (previews only). */
  label: string | null;
  mergeRequest: number | null;
  /** Set for a build recorded as skipped: why. */
  skipReason?: string;
}

/** The pointer of a branch's newest build: one per branch, one per merge request. */
export const buildRef = (build: Pick<NewBuild, 'branch' | 'mergeRequest'>) =>
  build.mergeRequest !== null ? `mr:${build.mergeRequest}` : `branch:${build.branch}`;

function buildItem(build: NewBuild, now: string) {
  return {
    ...keys.deployment(build.projectId, build.deploymentId),
    ...keys.deploymentByProject(build.projectId, now, build.deploymentId),
    type: 'deployment',
    id: build.deploymentId,
    project_id: build.projectId,
    team_id: build.teamId,
    status: build.skipReason ? 'skipped' : 'queued',
    label: null,
    created_at: now,
    ready_at: null,
    file_count: 0,
    total_bytes: 0,
    trigger: build.trigger,
    target: build.target,
    branch: build.branch,
    commit_sha: build.commitSha,
    commit_message: build.commitMessage,
    preview_label: build.label,
    merge_request: build.mergeRequest,
    queued_at: now,
    started_at: null,
    finished_at: build.skipReason ? now : null,
    skip_reason: build.skipReason ?? null,
    log_lines: 0,
    log_read: 0,
  };
}

/** Records a skipped build: nothing is queued, nothing is cancelled. */
export async function recordSkippedBuild(build: NewBuild & { skipReason: string }): Promise<void> {
  await dynamo().send(
    new PutCommand({
      TableName: config.tableName(),
      Item: buildItem(build, new Date().toISOString()),
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
}

const ATTEMPTS = 20;

/** How long a commit a delivery queued stays known: a delivery of it for the same branch (or merge request) builds nothing. */
export const BUILT_COMMIT_SECONDS = 24 * 3600;

/**
 * The mark of a commit queued by a webhook delivery for one branch or merge request of a project, written
 * in the build's own transaction on the condition that no mark of it lives: of two deliveries of one
 * commit, even racing, one builds. Kept 24 h (expired marks count as absent until TTL removes them).
 */
function builtCommitWrite(build: NewBuild, now: Date) {
  return {
    Put: {
      TableName: config.tableName(),
      Item: {
        ...keys.builtCommit(build.projectId, buildRef(build), build.commitSha!),
        type: 'built_commit',
        ref: buildRef(build),
        commit_sha: build.commitSha,
        deployment_id: build.deploymentId,
        queued_at: now.toISOString(),
        ttl: epochSeconds(now) + BUILT_COMMIT_SECONDS,
      },
      ConditionExpression: 'attribute_not_exists(pk) OR #ttl < :now',
      ExpressionAttributeNames: { '#ttl': 'ttl' },
      ExpressionAttributeValues: { ':now': epochSeconds(now) },
    },
  };
}

/**
 * Forgets the commits delivered for a branch or merge request (its preview was taken down: a reopened
 * merge request, or a branch pushed again, at the same commit builds again).
 */
export async function forgetBuiltCommits(projectId: string, ref: string): Promise<void> {
  const { pk, skPrefix } = keys.builtCommitPrefix(projectId, ref);
  const items = await queryAll<TableKey & { ref?: string }>({
    TableName: config.tableName(),
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix },
  });
  for (const item of items) {
    // The prefix also matches a longer ref (`branch:a#b` under `branch:a#`): the stored ref decides.
    if (item.ref !== ref) continue;
    await dynamo().send(new DeleteCommand({ TableName: config.tableName(), Key: { pk: item.pk, sk: item.sk } }));
  }
}

/**
 * Records a queued build and makes it its branch's newest, in one
 * transaction conditional on the pointer still naming the build it read.
 * Returns the build it displaced (to be cancelled), if any. With
 * `oncePer24h` (a webhook delivery) the commit's mark is written in the
 * same transaction: when the commit was queued for this branch in the last
 * 24 hours nothing is written and `alreadyBuilt` is true.
 */
export async function recordQueuedBuild(
  build: NewBuild,
  options: { oncePer24h?: boolean } = {},
): Promise<{ displaced: string | null; alreadyBuilt?: boolean }> {
  const table = config.tableName();
  const pointerKey = keys.branchBuild(build.projectId, buildRef(build));
  const marked = options.oncePer24h === true && build.commitSha !== null;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const now = new Date().toISOString();
    const pointer = (await dynamo().send(new GetCommand({ TableName: table, Key: pointerKey, ConsistentRead: true }))).Item;
    const previous = (pointer?.deployment_id as string | undefined) ?? null;
    try {
      await dynamo().send(
        new TransactWriteCommand({
          TransactItems: [
            ...(marked ? [builtCommitWrite(build, new Date(now))] : []),
            { Put: { TableName: table, Item: buildItem(build, now), ConditionExpression: 'attribute_not_exists(pk)' } },
            {
              Put: {
                TableName: table,
                Item: { ...pointerKey, type: 'branch_build', deployment_id: build.deploymentId, queued_at: now },
                ConditionExpression: previous ? 'deployment_id = :previous' : 'attribute_not_exists(pk)',
                ExpressionAttributeValues: previous ? { ':previous': previous } : undefined,
              },
            },
          ],
        }),
      );
      return { displaced: previous };
    } catch (error) {
      if (!isTransactionCanceled(error)) throw error;
      if (marked && conditionFailedAt(error, 0)) return { displaced: null, alreadyBuilt: true };
    }
  }
  throw new Error(`the newest build of ${buildRef(build)} kept changing`);
}

export function getBuild(projectId: string, deploymentId: string): Promise<DeploymentItem | null> {
  return getItem<DeploymentItem>(keys.deployment(projectId, deploymentId), true);
}

async function conditionalUpdate(input: {
  projectId: string;
  deploymentId: string;
  set: Partial<DeploymentItem>;
  fromStatus: BuildStatus[];
  extraCondition?: string;
  values?: ExpressionValues;
}): Promise<boolean> {
  const names: Record<string, string> = { '#status': 'status' };
  const values: ExpressionValues = { ...input.values };
  const sets = setFields(input.set, names, values);
  const from = input.fromStatus.map((status, i) => {
    values[`:from${i}`] = status;
    return `:from${i}`;
  });
  try {
    await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.deployment(input.projectId, input.deploymentId),
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: `#status IN (${from.join(', ')})${input.extraCondition ? ` AND ${input.extraCondition}` : ''}`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
    );
    return true;
  } catch (error) {
    if (isConditionalCheckFailure(error)) return false;
    throw error;
  }
}

/** queued -> building: the one worker that wins this runs the build. */
export function claimBuild(projectId: string, deploymentId: string): Promise<boolean> {
  return conditionalUpdate({
    projectId,
    deploymentId,
    set: { status: 'building', started_at: new Date().toISOString() },
    fromStatus: ['queued'],
  });
}

/** What the build host named the running build by (its run id, or CodeBuild's build id). */
export function recordBuildHandle(projectId: string, deploymentId: string, handle: string): Promise<boolean> {
  return conditionalUpdate({ projectId, deploymentId, set: { build_handle: handle }, fromStatus: ['building'] });
}

/** How many lines of the host's log were read, and how many of them were kept. */
export function recordLogProgress(projectId: string, deploymentId: string, progress: { read: number; kept: number }): Promise<boolean> {
  return conditionalUpdate({
    projectId,
    deploymentId,
    set: { log_read: progress.read, log_lines: progress.kept },
    fromStatus: ['building'],
  });
}

/**
 * A newer build of the branch arrived: a queued build is cancelled at once;
 * a running one is flagged, and the worker following it stops it.
 */
export async function cancelBuild(projectId: string, deploymentId: string, reason: string): Promise<void> {
  const now = new Date().toISOString();
  if (
    await conditionalUpdate({
      projectId,
      deploymentId,
      set: { status: 'canceled', finished_at: now, cancel_reason: reason },
      fromStatus: ['queued'],
    })
  )
    return;
  await conditionalUpdate({ projectId, deploymentId, set: { cancel_requested_at: now, cancel_reason: reason }, fromStatus: ['building'] });
}

/**
 * building -> an end state; `failed` also from `failed` (the publish step may have failed the deployment first).
 * Never over a build already ended as lost (endLostBuild): a late finish loses to it, and says so (false).
 */
export function finishBuild(
  projectId: string,
  deploymentId: string,
  end: {
    status: 'ready' | 'failed' | 'canceled' | 'skipped';
    failure?: { message: string; kind: 'user' | 'platform' };
    extra?: Partial<DeploymentItem>;
  },
): Promise<boolean> {
  const set: Partial<DeploymentItem> = { status: end.status, finished_at: new Date().toISOString(), ...(end.extra ?? {}) };
  if (end.failure) {
    set.failure_message = end.failure.message;
    set.failure_kind = end.failure.kind;
  }
  // Publishing moved the deployment to `ready` (its commit) or `failed` (its functions build) itself.
  const from: BuildStatus[] =
    end.status === 'failed' ? ['building', 'failed'] : end.status === 'ready' ? ['building', 'ready'] : ['building'];
  return conditionalUpdate({ projectId, deploymentId, set, fromStatus: from, extraCondition: 'attribute_not_exists(lost_at)' }).then(
    (ended) => logBuildEnd(ended, projectId, deploymentId, end.status),
  );
}

/** A build's outcome as a log line, once its end is recorded: the dashboard's "Builds by outcome" counts these. */
function logBuildEnd(ended: boolean, projectId: string, deploymentId: string, status: BuildStatus, lost = false): boolean {
  if (ended) logger.info('build ended', { project_id: projectId, deployment_id: deploymentId, status, ...(lost ? { lost } : {}) });
  return ended;
}

/**
 * A build whose worker was lost: `building` becomes `failed` with the platform's line; a build
 * that published (`ready`, or `failed` by its functions build) without its end recorded gets its
 * end. Conditional on the status read and on no end recorded, so a late real finish and this
 * leave one outcome.
 */
export function endLostBuild(
  projectId: string,
  deploymentId: string,
  seenStatus: BuildStatus,
  failure: { message: string; logLines: number } | null,
): Promise<boolean> {
  const now = new Date().toISOString();
  const set: Partial<DeploymentItem> = { finished_at: now, lost_at: now };
  if (failure) {
    Object.assign(set, { status: 'failed', failure_message: failure.message, failure_kind: 'platform', log_lines: failure.logLines });
  }
  return conditionalUpdate({
    projectId,
    deploymentId,
    set,
    fromStatus: [seenStatus],
    extraCondition: 'attribute_type(finished_at, :nullType)',
    values: { ':nullType': 'NULL' },
  }).then((ended) => logBuildEnd(ended, projectId, deploymentId, failure ? 'failed' : seenStatus, true));
}

/** A queued build that will never run: its project went, or its team is suspended. */
export function dropQueuedBuild(
  projectId: string,
  deploymentId: string,
  end: { status: 'canceled' | 'skipped'; reason: string },
): Promise<boolean> {
  const set = {
    status: end.status,
    finished_at: new Date().toISOString(),
    [end.status === 'skipped' ? 'skip_reason' : 'cancel_reason']: end.reason,
  };
  return conditionalUpdate({ projectId, deploymentId, set, fromStatus: ['queued'] }).then((ended) =>
    logBuildEnd(ended, projectId, deploymentId, end.status),
  );
}
