import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';
import { keys } from '../db/keys.ts';
import type { ExpressionValues } from '../db/item.ts';

/**
 * The auto-deploy failure breaker, system state on the project item
 * (`consecutive_build_failures`, `last_build_failure_message`,
 * `auto_deploy_paused_at`, `auto_deploy_pause_reason` and the internal
 * `build_failure_signature`). Only build outcomes and the resume operation
 * write it, each by a conditional write on the count it read, so two
 * outcomes racing never lose a failure; a settings save never names these
 * attributes (lib/project-setup/settings.ts), so it cannot write a stale value back.
 */

/** User-caused failures with one signature in a row that pause auto-deploy. */
export const BREAKER_THRESHOLD = 3;
/** The single value of `auto_deploy_pause_reason`. */
export const PAUSE_REASON = 'consecutive_build_failures';

export interface BreakerState {
  consecutive_build_failures: number;
  last_build_failure_message: string | null;
  auto_deploy_paused_at: string | null;
  auto_deploy_pause_reason: string | null;
}

const ATTEMPTS = 20;

async function readBreaker(projectId: string): Promise<{ count: number; signature: string | null; paused: string | null } | null> {
  const item = (
    await dynamo().send(
      new GetCommand({
        TableName: config.tableName(),
        Key: keys.project(projectId),
        ConsistentRead: true,
        ProjectionExpression: 'consecutive_build_failures, build_failure_signature, auto_deploy_paused_at',
      }),
    )
  ).Item;
  if (!item) return null;
  return {
    count: (item.consecutive_build_failures as number | undefined) ?? 0,
    signature: (item.build_failure_signature as string | null | undefined) ?? null,
    paused: (item.auto_deploy_paused_at as string | null | undefined) ?? null,
  };
}

/** One conditional update of the breaker, retried on a lost race with a fresh read. */
async function updateBreaker(
  projectId: string,
  next: (current: { count: number; signature: string | null; paused: string | null }) => { set: ExpressionValues } | null,
): Promise<void> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const current = await readBreaker(projectId);
    if (!current) return;
    const change = next(current);
    if (!change) return;
    const names: Record<string, string> = {};
    const values: ExpressionValues = { ':seen': current.count, ':zero': 0 };
    const sets = Object.entries(change.set).map(([field, value], i) => {
      names[`#b${i}`] = field;
      values[`:b${i}`] = value;
      return `#b${i} = :b${i}`;
    });
    try {
      await dynamo().send(
        new UpdateCommand({
          TableName: config.tableName(),
          Key: keys.project(projectId),
          UpdateExpression: `SET ${sets.join(', ')}`,
          ConditionExpression:
            'attribute_exists(pk) AND (consecutive_build_failures = :seen OR (attribute_not_exists(consecutive_build_failures) AND :seen = :zero))',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      );
      return;
    } catch (error) {
      if (!isConditionalCheckFailure(error)) throw error;
    }
  }
  throw new Error(`the breaker of project ${projectId} kept changing`);
}

/**
 * A user-caused failure: the streak grows when its signature equals the last
 * one and restarts at 1 otherwise; at BREAKER_THRESHOLD auto-deploy pauses.
 */
export async function recordUserFailure(projectId: string, failure: { message: string; signature: string }): Promise<void> {
  await updateBreaker(projectId, (current) => {
    const count = current.signature === failure.signature ? current.count + 1 : 1;
    const pause = count >= BREAKER_THRESHOLD && !current.paused;
    return {
      set: {
        consecutive_build_failures: count,
        last_build_failure_message: failure.message,
        build_failure_signature: failure.signature,
        ...(pause ? { auto_deploy_paused_at: new Date().toISOString(), auto_deploy_pause_reason: PAUSE_REASON } : {}),
      },
    };
  });
}

const CLEARED = {
  consecutive_build_failures: 0,
  last_build_failure_message: null,
  build_failure_signature: null,
};

/**
 * A successful build ends the streak. A manual build's success also lifts
 * the pause (the user fixed it and proved it); another one leaves a pause.
 */
export async function recordBuildSuccess(projectId: string, manual: boolean): Promise<void> {
  await updateBreaker(projectId, (current) => {
    if (current.count === 0 && current.signature === null && !(manual && current.paused)) return null;
    return { set: { ...CLEARED, ...(manual ? { auto_deploy_paused_at: null, auto_deploy_pause_reason: null } : {}) } };
  });
}

/** POST /api/v1/projects/{id}/auto-deploy/resume: the breaker cleared, whatever it held. */
export async function resumeAutoDeploy(projectId: string): Promise<void> {
  await updateBreaker(projectId, () => ({ set: { ...CLEARED, auto_deploy_paused_at: null, auto_deploy_pause_reason: null } }));
}
