import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  DeleteScheduleCommand,
  GetScheduleCommand,
  ListSchedulesCommand,
  type GetScheduleCommandOutput,
  type ScheduleSummary,
} from '@aws-sdk/client-scheduler';
import { GetQueueUrlCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { scheduler } from '../aws/scheduler.ts';
import { sqs } from '../aws/sqs.ts';
import { config } from '../config.ts';
import { fiveFieldsOfSchedulerCron, nextRun, parseSchedule } from '../functions/schedule.ts';
import { logger } from '../logger.ts';
import { workers, type WorkerRow } from '../workers.ts';
import { repoRoot } from './api-server.ts';
import type { LocalDriver } from './driver.ts';
import { localConfig } from '../local-config.ts';

/**
 * The ARN a schedule-triggered worker gets on the local platform. Nothing
 * answers at it: the scheduler driver maps it back to the worker's row.
 */
export function localWorkerArn(name: string): string {
  return `arn:aws:lambda:${config.awsRegion()}:000000000000:function:slipway-local-${name}`;
}

/** The environment naming each schedule target, as the CDK stack sets it for deployed functions. */
export function localScheduleTargetEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const row of workers) {
    if (row.trigger.kind === 'schedule') env[row.trigger.targetArnEnvVar] = localWorkerArn(row.name);
  }
  return env;
}

/** `at(yyyy-mm-ddThh:mm:ss)` in the schedule's time zone (UTC is all this platform writes). */
function dueAt(expression: string | undefined, timezone: string | undefined): number | null {
  const match = /^at\((\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\)$/.exec(expression ?? '');
  if (!match) return null;
  if (timezone && timezone !== 'UTC' && timezone !== 'Etc/UTC') return null;
  return Date.parse(`${match[1]}Z`);
}

const RATE_UNIT_MS: Record<string, number> = {
  minute: 60_000,
  minutes: 60_000,
  hour: 3_600_000,
  hours: 3_600_000,
  day: 86_400_000,
  days: 86_400_000,
};

/**
 * When a recurring `rate(N unit)` schedule next fires: one period after it last fired (or, the first time,
 * after it was created), as EventBridge Scheduler fires it. Null for any other expression.
 */
export function rateDueAt(expression: string | undefined, since: number): number | null {
  const match = /^rate\((\d+) (minutes?|hours?|days?)\)$/.exec(expression ?? '');
  if (!match) return null;
  return since + Number(match[1]) * RATE_UNIT_MS[match[2]!]!;
}

/**
 * When a recurring `cron(...)` schedule (lib/functions/schedule.ts schedulerCron wrote it) next fires: its first
 * minute after `since`, UTC; of minutes that all passed already (the platform was stopped), only the latest, as
 * Scheduler never fires a schedule's missed minutes one after another. Null for any other expression.
 */
export function cronDueAt(expression: string | undefined, since: number, now = Date.now()): number | null {
  const fields = fiveFieldsOfSchedulerCron(expression);
  const parsed = fields === null ? null : parseSchedule(fields);
  if (!parsed?.ok) return null;
  // A day back is as far as a stopped platform's catch-up looks.
  let due = nextRun(parsed.schedule, new Date(Math.max(since, now - 86_400_000))).getTime();
  for (let later = due; later <= now; later = nextRun(parsed.schedule, new Date(later)).getTime()) due = later;
  return due;
}

/** The context attribute Scheduler fills into a target's input at each firing: the time it was due, to the second. */
export function withScheduledTime(input: string, at: number): string {
  return input.replaceAll('<aws.scheduler.scheduled-time>', new Date(at).toISOString().replace(/\.\d{3}Z$/, 'Z'));
}

/** An SQS queue a schedule sends its input to (the invocations queue of scheduled functions), by its ARN. */
function queueTarget(arn: string): ScheduleTarget | null {
  const match = /^arn:aws:sqs:[^:]+:(\d+):(.+)$/.exec(arn);
  if (!match) return null;
  let url: Promise<string> | null = null;
  return {
    name: `queue ${match[2]}`,
    invoke: async (input) => {
      url ??= sqs()
        .send(new GetQueueUrlCommand({ QueueName: match[2]!, QueueOwnerAWSAccountId: match[1]! }))
        .then((reply) => reply.QueueUrl!);
      url.catch(() => (url = null));
      await sqs().send(new SendMessageCommand({ QueueUrl: await url, MessageBody: String(input) }));
    },
  };
}

type WorkerHandler = (event: unknown) => Promise<unknown>;

/** How many firings of one schedule are tried before it is dropped (EventBridge retries too, then gives up). */
const MAX_ATTEMPTS = 3;

/** What a schedule fires: a worker row's handler here, the template's Lambda in the synthesized mode. */
export interface ScheduleTarget {
  name: string;
  invoke(input: unknown): Promise<unknown>;
}

/** The schedule- and rate-triggered rows of lib/workers.ts, by the local ARN their schedules name. */
export function workerRowTargets(): Map<string, ScheduleTarget> {
  const handlers = new Map<string, Promise<WorkerHandler>>();
  const handlerOf = (row: WorkerRow) => {
    let handler = handlers.get(row.handler);
    if (!handler) {
      handler = import(pathToFileURL(join(repoRoot, row.handler)).href).then((mod: { handler?: WorkerHandler }) => {
        if (typeof mod.handler !== 'function') throw new Error(`${row.handler} exports no handler`);
        return mod.handler;
      });
      handlers.set(row.handler, handler);
    }
    return handler;
  };
  const map = new Map<string, ScheduleTarget>();
  for (const row of workers) {
    if (row.trigger.kind !== 'schedule' && row.trigger.kind !== 'rate') continue;
    map.set(localWorkerArn(row.name), { name: row.name, invoke: async (input) => (await handlerOf(row))(input) });
  }
  return map;
}

/**
 * Each schedule as last read, by name: read again only when the listing shows it changed. A poll every half second
 * read each of the platform's recurring schedules anew, about a tenth of the calls a test platform made.
 */
function scheduleReader() {
  const read = new Map<string, { modified: number | undefined; schedule: GetScheduleCommandOutput }>();
  return {
    async read(summary: ScheduleSummary): Promise<GetScheduleCommandOutput> {
      const modified = summary.LastModificationDate?.getTime();
      const known = read.get(summary.Name!);
      if (known && modified !== undefined && known.modified === modified) return known.schedule;
      const schedule = await scheduler().send(new GetScheduleCommand({ Name: summary.Name!, GroupName: config.scheduleGroup() }));
      read.set(summary.Name!, { modified, schedule });
      return schedule;
    },
    /** Forgets the schedules a whole listing no longer shows. */
    keepOnly(listed: Set<string>): void {
      for (const name of read.keys()) if (!listed.has(name)) read.delete(name);
    },
  };
}

type Due = { name: string; target: ScheduleTarget; input: unknown; recurring: boolean; cron: boolean; at: number };

/** The schedule's firing when it is due (null when not yet), its Input with the scheduled time filled in. */
function dueFiring(name: string, arn: string, target: ScheduleTarget, schedule: GetScheduleCommandOutput, since: number): Due | null {
  // A changed cron schedule runs from its change on, as Scheduler's does.
  const cronSince = Math.max(since, schedule.LastModificationDate?.getTime() ?? 0);
  const cronAt = cronDueAt(schedule.ScheduleExpression, cronSince);
  const recurring = rateDueAt(schedule.ScheduleExpression, since) ?? cronAt;
  const at = recurring ?? dueAt(schedule.ScheduleExpression, schedule.ScheduleExpressionTimezone);
  if (at === null || at > Date.now()) return null;
  const text = withScheduledTime(schedule.Target?.Input ?? '{}', at);
  const input = arn.startsWith('arn:aws:sqs:') ? text : JSON.parse(text);
  return { name, target, input, recurring: recurring !== null, cron: cronAt !== null, at };
}

/** A one-time schedule fires, and is deleted once it went through or failed MAX_ATTEMPTS times. */
async function fireOnce(name: string, target: ScheduleTarget, input: unknown, attempts: Map<string, number>): Promise<void> {
  try {
    await target.invoke(input);
  } catch (error) {
    const tries = (attempts.get(name) ?? 0) + 1;
    attempts.set(name, tries);
    logger.error('scheduled worker failed', { worker: target.name, schedule: name, attempt: tries, error: (error as Error).message });
    if (tries < MAX_ATTEMPTS) return;
  }
  attempts.delete(name);
  try {
    await scheduler().send(new DeleteScheduleCommand({ Name: name, GroupName: config.scheduleGroup() }));
  } catch (error) {
    if ((error as Error).name !== 'ResourceNotFoundException') throw error;
  }
}

/**
 * Plays EventBridge Scheduler, which moto stores but never fires: polls the
 * schedule group, and when a one-time `at()` schedule is due, invokes its
 * target with the schedule's Input, then deletes the schedule
 * (ActionAfterCompletion DELETE). A recurring `rate()` schedule (a `rate` row,
 * provisioned with the platform) fires each period and stays, and so does a
 * `cron()` one (a scheduled function's), which sends its Input, the scheduled
 * time filled in, to the SQS queue its target names.
 */
export function schedulerDriver(options: { pollMs?: number; targets?: () => Map<string, ScheduleTarget> } = {}): LocalDriver {
  const pollMs = options.pollMs ?? localConfig.schedulerPollMs();
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let stopped = false;
  const attempts = new Map<string, number>();
  /** When each recurring schedule last fired (its creation, until it first does). */
  const lastFired = new Map<string, number>();
  let targetsByArn: Map<string, ScheduleTarget> | null = null;

  const queueTargets = new Map<string, ScheduleTarget | null>();
  const targetOf = (targets: Map<string, ScheduleTarget>, arn: string) => {
    if (!queueTargets.has(arn)) queueTargets.set(arn, queueTarget(arn));
    return targets.get(arn) ?? queueTargets.get(arn) ?? null;
  };
  const schedules = scheduleReader();

  async function dueSchedules(): Promise<Due[]> {
    // The shared client of lib/aws/scheduler.ts, keyed by the endpoint configured now.
    const client = scheduler();
    const group = config.scheduleGroup();
    const targets = (targetsByArn ??= (options.targets ?? workerRowTargets)());
    let token: string | undefined;
    const due: Due[] = [];
    const listed = new Set<string>();
    do {
      const page = await client.send(new ListSchedulesCommand({ GroupName: group, NextToken: token }));
      for (const summary of page.Schedules ?? []) {
        listed.add(summary.Name!);
        const arn = summary.Target?.Arn ?? '';
        const target = targetOf(targets, arn);
        if (!target) continue;
        const schedule = await schedules.read(summary);
        const since = lastFired.get(summary.Name!) ?? schedule.CreationDate?.getTime() ?? Date.now();
        const firing = dueFiring(summary.Name!, arn, target, schedule, since);
        if (firing) due.push(firing);
      }
      token = page.NextToken;
    } while (token && !stopped);
    if (!token) schedules.keepOnly(listed);
    return due;
  }

  async function fire({ name, target, input, recurring, cron, at }: Due): Promise<void> {
    if (recurring) {
      // A recurring schedule stays; a failed firing waits for the next period, as EventBridge's would. A cron
      // schedule counts from the tick it fired (a late poll must not skip the next), a rate one from now.
      lastFired.set(name, cron ? at : Date.now());
      await target
        .invoke(input)
        .catch((error: unknown) =>
          logger.error('scheduled worker failed', { worker: target.name, schedule: name, error: (error as Error).message }),
        );
      return;
    }
    await fireOnce(name, target, input, attempts);
  }

  async function tick(): Promise<void> {
    if (!config.awsEndpoint()) return;
    await Promise.all((await dueSchedules()).map(fire));
  }

  const loop = () => {
    if (stopped) return;
    running = tick()
      .catch((error: unknown) => logger.error('scheduler driver poll failed', { error: (error as Error).message }))
      .finally(() => {
        running = null;
        if (!stopped) timer = setTimeout(loop, pollMs);
      });
  };

  return {
    name: 'scheduler',
    start() {
      timer = setTimeout(loop, pollMs);
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
