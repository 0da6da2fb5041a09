import { randomUUID } from 'node:crypto';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { DescribeTasksCommand } from '@aws-sdk/client-ecs';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { s3 } from '../../../aws/s3.ts';
import { config } from '../../../config.ts';
import { claimWarmSlot, listWarmSlots, markWarmSlotStarted, releaseWarmSlot, type WarmSlot } from '../../warm-task-records.ts';
import { ecs, runRunnerTask } from './runner-task.ts';
import { cloudHostVariables, variable } from './variables.ts';
import type { LogFields } from '../../../logger.ts';

// The warm pool of the cloud host (docs/functions.md, "The warm pool"): blank runner tasks started ahead of need, so
// that a queued invocation does not wait for Fargate to place a task and pull the image. A blank task holds one
// presigned GET of its own assignment object and nothing else; a worker takes it by emptying its slot (a
// conditional delete), writes the invocation's variables there, and the task runs that one invocation and exits.

/** How long a blank task waits for its invocation; its assignment URL outlives that by PRESIGN_MARGIN_SECONDS. */
export const WARM_TASK_LIFETIME_MS = 55 * 60_000;
const PRESIGN_MARGIN_SECONDS = 5 * 60;
/** A slot whose task's wait ends within this gets a new task beside it (its start takes tens of seconds). */
const RENEW_BEFORE_MS = 2 * 60_000;
/** A worker takes a task only if the task waits at least this much longer: it sees its assignment before it leaves. */
const TAKE_MARGIN_MS = 20_000;
/** How often a blank task asks for its assignment: each ask is one S3 GET (docs/functions.md prices them). */
export const ASSIGNMENT_POLL_MS = 1000;

/** Where a blank task's assignment is written: under invocations/, whose objects the bucket expires after 7 days. */
const assignmentKey = (warmId: string) => `invocations/warm/${warmId}/assignment.json`;

export interface TakenWarmTask {
  slot: number;
  warmId: string;
  taskArn: string;
}

function log(level: 'INFO' | 'WARN', message: string, fields: LogFields) {
  console.error(JSON.stringify({ level, message, ...fields }));
}

/** Starts a blank task in the slot unless the slot holds a task that is not near its end (another filler's). */
async function fillSlot(slot: number, now: number): Promise<string | null> {
  const definition = variable(cloudHostVariables.taskDefinitionArn);
  const warmId = randomUUID();
  const readyUntil = now + WARM_TASK_LIFETIME_MS;
  if (
    !(await claimWarmSlot(
      { slot, warm_id: warmId, task_definition: definition, ready_until: readyUntil, claimed_at: now },
      now,
      RENEW_BEFORE_MS,
    ))
  )
    return null;
  try {
    const url = await getSignedUrl(s3(), new GetObjectCommand({ Bucket: config.bucket('bundles'), Key: assignmentKey(warmId) }), {
      expiresIn: WARM_TASK_LIFETIME_MS / 1000 + PRESIGN_MARGIN_SECONDS,
    });
    const environment = [
      { name: 'SLIPWAY_ASSIGNMENT_URL', value: url },
      { name: 'SLIPWAY_WARM_UNTIL', value: String(readyUntil) },
      { name: 'SLIPWAY_ASSIGNMENT_POLL_MS', value: String(ASSIGNMENT_POLL_MS) },
    ];
    const taskArn = await runRunnerTask(
      environment,
      `warm-slot-${slot}`,
      config.functionsRuntimeVariable(cloudHostVariables.warmCapacityProvider),
    );
    await markWarmSlotStarted(slot, warmId, taskArn);
    return taskArn;
  } catch (error) {
    await releaseWarmSlot(slot, warmId);
    throw error;
  }
}

/** Starts a blank task in every slot of the pool that is empty or near its end: at most `size` at once, whoever calls. */
export async function fillWarmPool(size: number): Promise<string[]> {
  const now = Date.now();
  const started = await Promise.allSettled(Array.from({ length: size }, (_, slot) => fillSlot(slot, now)));
  const failed = started.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failed) throw failed.reason;
  return started.flatMap((outcome) => (outcome.status === 'fulfilled' && outcome.value ? [outcome.value] : []));
}

/**
 * Takes one blank task of the current task definition for an invocation, or null when none is ready. The slot's
 * conditional delete is the take: of two workers racing for a task, one gets it and the other tries the next.
 */
export async function takeWarmTask(): Promise<TakenWarmTask | null> {
  const definition = variable(cloudHostVariables.taskDefinitionArn);
  const takenBefore = Date.now() + TAKE_MARGIN_MS;
  const ready = (await listWarmSlots()).filter(
    (slot): slot is WarmSlot & { task_arn: string } =>
      slot.task_arn !== undefined && slot.task_definition === definition && slot.ready_until > takenBefore,
  );
  // The oldest first: it has the least left of its wait, and was the likeliest to have finished starting.
  ready.sort((a, b) => a.ready_until - b.ready_until);
  for (const slot of ready) {
    if (await releaseWarmSlot(slot.slot, slot.warm_id, { takenBefore, taskDefinition: definition }))
      return { slot: slot.slot, warmId: slot.warm_id, taskArn: slot.task_arn };
  }
  return null;
}

/** Writes the invocation's variables where the taken task looks; only if nothing is there yet (a second write never lands). */
export async function assignWarmTask(taken: TakenWarmTask, environment: { name: string; value: string }[]): Promise<void> {
  const variables = Object.fromEntries(environment.map(({ name, value }) => [name, value]));
  await s3().send(
    new PutObjectCommand({
      Bucket: config.bucket('bundles'),
      Key: assignmentKey(taken.warmId),
      Body: JSON.stringify({ variables }),
      ContentType: 'application/json',
      IfNoneMatch: '*',
    }),
  );
}

/** The assignment holds the invocation's presigned URLs: it goes once the run has ended. */
export async function discardAssignment(taken: TakenWarmTask): Promise<void> {
  await s3().send(new DeleteObjectCommand({ Bucket: config.bucket('bundles'), Key: assignmentKey(taken.warmId) }));
}

/**
 * The keeper (the `function-warm-tasks` schedule, every minute): empties the slots whose task stopped (a Spot
 * interruption, a wait that ended, a crash) and fills the pool, so it is full while nobody invokes anything.
 */
export async function keepWarmPool(size: number): Promise<{ cleared: number; started: number }> {
  if (size <= 0) return { cleared: 0, started: 0 };
  const slots = (await listWarmSlots()).filter((slot): slot is WarmSlot & { task_arn: string } => slot.task_arn !== undefined);
  let cleared = 0;
  if (slots.length > 0) {
    const described = await ecs().send(
      new DescribeTasksCommand({ cluster: variable(cloudHostVariables.taskCluster), tasks: slots.map((slot) => slot.task_arn) }),
    );
    const stopped = new Set([
      ...(described.tasks ?? []).filter((task) => task.lastStatus === 'STOPPED').map((task) => task.taskArn),
      ...(described.failures ?? []).map((failure) => failure.arn),
    ]);
    for (const slot of slots.filter((s) => stopped.has(s.task_arn))) if (await releaseWarmSlot(slot.slot, slot.warm_id)) cleared++;
  }
  const started = await fillWarmPool(size);
  if (cleared || started.length) log('INFO', 'warm pool kept', { cleared, started: started.length });
  return { cleared, started: started.length };
}
