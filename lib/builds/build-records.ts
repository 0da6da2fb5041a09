import { GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { isConditionalCheckFailure, isTransactionCanceled } from '../db/errors.ts';
import { keys } from '../db/keys.ts';
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
export type BuildStatus = 'queued' | 'building' | 'ready' | 'failed' | 'canceled' | 'skipped';

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

/**
 * Records a queued build and makes it its branch's newest, in one
 * transaction conditional on the pointer still naming the build it read.
 * Returns the build it displaced (to be cancelled), if any.
 */
export async function recordQueuedBuild(build: NewBuild): Promise<{ displaced: string | null }> {
  const table = config.tableName();
  const pointerKey = keys.branchBuild(build.projectId, buildRef(build));
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const now = new Date().toISOString();
    const pointer = (await dynamo().send(new GetCommand({ TableName: table, Key: pointerKey, ConsistentRead: true }))).Item;
    const previous = (pointer?.deployment_id as string | undefined) ?? null;
    try {
      await dynamo().send(
        new TransactWriteCommand({
          TransactItems: [
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
    }
  }
  throw new Error(`the newest build of ${buildRef(build)} kept changing`);
}

export async function getBuild(projectId: string, deploymentId: string): Promise<Record<string, unknown> | null> {
  const reply = await dynamo().send(
    new GetCommand({ TableName: config.tableName(), Key: keys.deployment(projectId, deploymentId), ConsistentRead: true }),
  );
  return reply.Item ?? null;
}

async function conditionalUpdate(input: {
  projectId: string;
  deploymentId: string;
  set: Record<string, unknown>;
  fromStatus: BuildStatus[];
  extraCondition?: string;
  values?: Record<string, unknown>;
}): Promise<boolean> {
  const names: Record<string, string> = { '#status': 'status' };
  const values: Record<string, unknown> = { ...input.values };
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
    extra?: Record<string, unknown>;
  },
): Promise<boolean> {
  const set: Record<string, unknown> = { status: end.status, finished_at: new Date().toISOString(), ...(end.extra ?? {}) };
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
  const set: Record<string, unknown> = { finished_at: now, lost_at: now };
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
