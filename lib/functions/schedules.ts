import { createHash, randomUUID } from 'node:crypto';
import pLimit from 'p-limit';
import { deleteSchedule, setRecurringSchedule } from '../aws/schedules.ts';
import { config } from '../config.ts';
import { ApiError } from '../errors/api-error.ts';
import { TOO_MANY_CONCURRENT_INVOCATIONS } from '../errors/catalogue/functions.ts';
import { logger } from '../logger.ts';
import { getProjectItem, type ProjectItem } from '../projects/records.ts';
import type { QueuedRequest } from './host.ts';
import { getInvocation } from './invocation-records.ts';
import type { DeployedFunction } from './model.ts';
import { startInvocation } from './queued-door.ts';
import { listFunctionRecords, type FunctionView } from './records.ts';
import { resolveQueuedRun } from './resolve.ts';
import { isTick, nextRun, parseSchedule, schedulerCron } from './schedule.ts';
import {
  getFunctionScheduleItem,
  listFunctionScheduleItems,
  recordScheduleDeleted,
  recordScheduleMade,
  skipScheduledTick,
  takeScheduledTick,
} from './schedule-records.ts';
import type { FunctionTelemetry } from './telemetry.ts';
import { type JsonObject } from '../json.ts';

/**
 * Scheduled functions (docs/functions.md, "Scheduled functions"). A function whose file exports
 * `config = { schedule }` runs on it while its deployment is live: one EventBridge Scheduler schedule per
 * scheduled function of the live deployment, in the platform's group, sending a tick to the invocations queue
 * (the scheduler role may send there and nowhere else). Whatever moves production (a publish, a promote or
 * rollback) or deletes the project brings the schedules in line with the live deployment (syncLiveSchedules,
 * deleteProjectSchedules). Each tick becomes a queued invocation through the queued door's path, with trigger
 * `schedule` (runScheduleTick); the local platform's scheduler driver fires the same schedules.
 */

/** A Scheduler schedule's name (at most 64 characters): the project and a digest of the function's name. */
export function functionScheduleName(projectId: string, name: string): string {
  return `fn-${projectId}-${createHash('sha256').update(name).digest('hex').slice(0, 20)}`;
}

/** The invocations queue's ARN, from its URL (`https://sqs.{region}.amazonaws.com/{account}/{name}`). */
export function invocationsQueueArn(): string {
  const [account, name] = new URL(config.queueUrl('invocations')).pathname.split('/').filter(Boolean).slice(-2);
  return `arn:aws:sqs:${config.awsRegion()}:${account}:${name}`;
}

/** What a schedule's tick carries to the invocations queue; Scheduler fills in the scheduled time. */
export interface ScheduleTick {
  project_id: string;
  function: string;
  schedule: string;
  scheduled_time: string;
}

export const SCHEDULED_TIME_ATTRIBUTE = '<aws.scheduler.scheduled-time>';

function tickInput(projectId: string, name: string, schedule: string): string {
  const tick: ScheduleTick = { project_id: projectId, function: name, schedule, scheduled_time: SCHEDULED_TIME_ATTRIBUTE };
  return JSON.stringify({ schedule_tick: tick });
}

/** A queue message's tick, or null when the body is not one. */
export function readScheduleTick(body: unknown): ScheduleTick | null {
  const tick = (body as { schedule_tick?: JsonObject } | null)?.schedule_tick;
  if (!tick || typeof tick !== 'object') return null;
  const { project_id, function: name, schedule, scheduled_time } = tick;
  if ([project_id, name, schedule, scheduled_time].some((value) => typeof value !== 'string')) return null;
  return tick as unknown as ScheduleTick;
}

/** The live deployment's scheduled functions of a project item (none when it is not active or nothing is live). */
async function liveSchedules(project: ProjectItem | null): Promise<Map<string, string>> {
  const live = project?.status === 'active' ? project.live_deployment_id : null;
  if (!live) return new Map();
  const records = await listFunctionRecords(project!.id, live);
  return new Map(records.filter((r) => r.schedule).map((r) => [r.name, r.schedule!]));
}

/** Syncs run again while production moved under them; past this a later sync (any publish or promote) finishes. */
const SYNC_ROUNDS = 3;

/**
 * Makes the project's Scheduler schedules those of its live deployment now: creates or changes the schedule of
 * each scheduled function, deletes those of functions that are gone or no longer scheduled. Each round reads the
 * project again at its end and runs again if production moved meanwhile, so of two syncs racing the last one to
 * finish leaves the schedules of the deployment that is live. A tick of a schedule left behind does nothing
 * (runScheduleTick checks the live deployment).
 */
export async function syncLiveSchedules(projectId: string): Promise<void> {
  for (let round = 0; round < SYNC_ROUNDS; round++) {
    const project = await getProjectItem(projectId, true);
    const [wanted, items] = await Promise.all([liveSchedules(project), listFunctionScheduleItems(projectId)]);
    const made = new Map(items.filter((item) => item.schedule).map((item) => [item.name, item.schedule!]));
    const target = invocationsQueueArn();
    const changed = [...wanted].filter(([name, schedule]) => made.get(name) !== schedule);
    const dropped = [...made].filter(([name]) => !wanted.has(name));
    const changes = changed.length + dropped.length;
    await Promise.all([
      ...changed.map(async ([name, schedule]) => {
        const parsed = parseSchedule(schedule);
        const cron = parsed.ok ? schedulerCron(parsed.schedule) : null;
        // The build refused any other; a record of an older build is left unscheduled rather than fail the sync.
        if (!cron) return;
        await recordScheduleMade(projectId, name, schedule);
        await setRecurringSchedule(functionScheduleName(projectId, name), cron.expression, target, tickInput(projectId, name, schedule));
      }),
      ...dropped.map(async ([name, schedule]) => {
        await deleteSchedule(functionScheduleName(projectId, name));
        await recordScheduleDeleted(projectId, name, schedule);
      }),
    ]);
    // A round that changed nothing cannot have undone another sync's work.
    if (changes === 0) return;
    const after = await getProjectItem(projectId, true);
    if (after?.live_deployment_id === project?.live_deployment_id && after?.status === project?.status) return;
  }
}

/** After production moved: a failure is logged, not thrown (production already moved); the next move syncs again. */
export async function syncLiveSchedulesAfterMove(projectId: string): Promise<void> {
  await syncLiveSchedules(projectId).catch((error: unknown) =>
    logger.error('function schedules not synced', { project_id: projectId, error: (error as Error).message }),
  );
}

/**
 * A deleted project's schedules: one per function that ever had a schedule item. The item is written before its
 * schedule is made and keeps its name when the schedule is deleted, so none made is missed.
 */
export async function deleteProjectSchedules(projectId: string): Promise<void> {
  const items = await listFunctionScheduleItems(projectId);
  // A few at a time: Scheduler's API rate is per account.
  const limit = pLimit(4);
  await Promise.all(items.map((item) => limit(() => deleteSchedule(functionScheduleName(projectId, item.name)))));
}

/** What a scheduled run's handler receives: POST, JSON `{"next_run": "<ISO time of the following tick>"}`. */
export function tickRequest(nextRunAt: Date): QueuedRequest {
  return {
    method: 'POST',
    query: '',
    headers: [['content-type', 'application/json']],
    body: Buffer.from(JSON.stringify({ next_run: nextRunAt.toISOString() })),
  };
}

export type TickOutcome = 'started' | 'skipped' | 'duplicate' | 'dropped' | 'refused';

/** How many times a tick reads the function's tick state again after losing a conditional write to another writer. */
const TICK_ATTEMPTS = 5;

/**
 * One tick of a function's schedule: a queued invocation (trigger `schedule`) of the live function, when the
 * tick is still the live deployment's (else `dropped`) and its minute is one of the schedule's (Scheduler's
 * expression may fire on more days than cron's day rule). While the previous scheduled run is pending or
 * running the tick is `skipped` and counted; a redelivered or older tick is a `duplicate`. Both are decided by
 * conditional writes on the function's tick state, so two deliveries at once start one run.
 */
export async function runScheduleTick(tick: ScheduleTick, telemetry: FunctionTelemetry): Promise<TickOutcome> {
  const at = new Date(tick.scheduled_time);
  const parsed = parseSchedule(tick.schedule);
  if (Number.isNaN(at.getTime()) || !parsed.ok) return drop(tick, 'the tick is malformed');
  const project = await getProjectItem(tick.project_id, true);
  if (!project) return drop(tick, 'the project is gone');
  const { fn } = await resolveQueuedRun(tick.project_id, project.team_id, tick.function);
  // Also null for a team outside the functions beta: its schedules exist, their ticks start nothing.
  if (!fn || fn.schedule !== tick.schedule) return drop(tick, 'no live function of an enrolled team has this schedule');
  if (!isTick(parsed.schedule, at)) return 'dropped';
  const tickAt = at.toISOString();
  for (let attempt = 0; attempt < TICK_ATTEMPTS; attempt++) {
    const state = await getFunctionScheduleItem(tick.project_id, tick.function);
    if (state?.last_tick_at !== undefined && state.last_tick_at >= tickAt) return 'duplicate';
    const open = state?.open_invocation_id;
    const previous = open ? await getInvocation(open) : null;
    if (previous && (previous.status === 'pending' || previous.status === 'running')) {
      if (await skipScheduledTick(tick.project_id, tick.function, tickAt, open!)) {
        logger.info('scheduled run skipped: the previous one is still open', { ...tickFields(tick), open_invocation_id: open });
        return 'skipped';
      }
      continue;
    }
    const id = randomUUID();
    if (!(await takeScheduledTick(tick.project_id, tick.function, tickAt, open, id))) continue;
    return startScheduledRun(fn, tick, nextRun(parsed.schedule, at), id, telemetry);
  }
  throw new Error('the tick lost every conditional write');
}

async function startScheduledRun(
  fn: DeployedFunction,
  tick: ScheduleTick,
  following: Date,
  id: string,
  telemetry: FunctionTelemetry,
): Promise<TickOutcome> {
  try {
    await startInvocation(fn, tickRequest(following), telemetry, { trigger: 'schedule', id });
    return 'started';
  } catch (error) {
    // At the team's in-flight cap the tick makes no run, as a POST would be refused; the next tick tries again.
    if (error instanceof ApiError && error.code === TOO_MANY_CONCURRENT_INVOCATIONS.code) {
      logger.warn('scheduled run refused: the team has 10 invocations in flight', tickFields(tick));
      return 'refused';
    }
    throw error;
  }
}

const tickFields = (tick: ScheduleTick) => ({
  project_id: tick.project_id,
  function_name: tick.function,
  scheduled_time: tick.scheduled_time,
});

function drop(tick: ScheduleTick, reason: string): TickOutcome {
  logger.info('schedule tick dropped', { ...tickFields(tick), reason });
  return 'dropped';
}

/** A live function's listing with its schedule's next run and the ticks skipped so far (null and 0 when unscheduled). */
export type ScheduledFunctionView = FunctionView & { next_run_at: string | null; skipped_runs: number };

export async function withScheduleTimes(projectId: string, functions: FunctionView[], now = new Date()): Promise<ScheduledFunctionView[]> {
  const items = functions.some((fn) => fn.schedule) ? await listFunctionScheduleItems(projectId) : [];
  const skipped = new Map(items.map((item) => [item.name, item.skipped_runs ?? 0]));
  return functions.map((fn) => {
    const parsed = fn.schedule ? parseSchedule(fn.schedule) : null;
    return {
      ...fn,
      next_run_at: parsed?.ok ? nextRun(parsed.schedule, now).toISOString() : null,
      skipped_runs: skipped.get(fn.name) ?? 0,
    };
  });
}
