import { randomUUID } from 'node:crypto';
import { DescribeTasksCommand, StopTaskCommand, type Task } from '@aws-sdk/client-ecs';
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { s3 } from '../../../aws/s3.ts';
import { config } from '../../../config.ts';
import type { ConsoleLine, QueuedRequest, QueuedResult } from '../../host.ts';
import type { DeployedFunction } from '../../model.ts';
import { ecs, RUNNER_CONTAINER_NAME, runRunnerTask, type TaskEnvironment } from './runner-task.ts';
import { cloudHostVariables, variable } from './variables.ts';
import { assignWarmTask, discardAssignment, fillWarmPool, takeWarmTask, type TakenWarmTask } from './warm-tasks.ts';
import type { LogFields } from '../../../logger.ts';

// The cloud host's queued invocations: one Fargate task of the runner image per invocation.

export { MAX_OVERRIDE_CHARS, RUNNER_CONTAINER_NAME } from './runner-task.ts';

/** The task's environment (lib/functions/runner/task.mjs reads the same names). */
export const TASK_VARIABLES = {
  bundleUrl: 'SLIPWAY_BUNDLE_URL',
  requestUrl: 'SLIPWAY_REQUEST_URL',
  resultUrl: 'SLIPWAY_RESULT_URL',
  consoleUrl: 'SLIPWAY_CONSOLE_URL',
  functionUrl: 'SLIPWAY_FUNCTION_URL',
} as const;

/** How the task entry exits (task.mjs `TASK_EXIT`). */
export const TASK_EXIT = { result: 0, crashed: 3, outOfMemory: 137, stopped: 143, failed: 1, unassigned: 4 } as const;

/** How long a task may take to be placed, pull the image and start; the budget runs from then. */
export function taskStartTimeoutMs(): number {
  return config.functionsTaskStartTimeoutMs();
}

/** How often the worker looks at the task and the result object; FUNCTIONS_TASK_POLL_MS shortens it for tests. */
export function taskPollMs(): number {
  return config.functionsTaskPollMs();
}

/** Presigned URLs outlive the task's start and budget with room to spare. */
const PRESIGN_SECONDS = 15 * 60;

/** The task's objects, under the invocation's prefix (lib/functions/invocations.ts keeps request.json, result.json and console.json there). */
export function queuedTaskKeys(invocation: { id: string; team_id: string }) {
  const prefix = `invocations/${invocation.team_id}/${invocation.id}/`;
  return { request: `${prefix}request.json`, result: `${prefix}task-result.json`, console: `${prefix}task-console.json` };
}

interface TaskResultObject {
  status: number;
  headers: [string, string][];
  body: string;
  outcome: 'response' | 'handler_error' | 'invalid_response' | 'start_failed';
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

async function objectExists(bucket: string, key: string): Promise<boolean> {
  try {
    await s3().send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return true;
  } catch (error) {
    const name = (error as { name?: string }).name;
    if (name === 'NotFound' || name === 'NoSuchKey') return false;
    throw error;
  }
}

async function readJson<T>(bucket: string, key: string): Promise<T | null> {
  try {
    const reply = await s3().send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return JSON.parse(await reply.Body!.transformToString('utf8')) as T;
  } catch (error) {
    const name = (error as { name?: string }).name;
    if (name === 'NoSuchKey' || name === 'NotFound' || error instanceof SyntaxError) return null;
    throw error;
  }
}

/** How a task that stopped without a result ended (no result object was found). */
export function stoppedTaskOutcome(
  task: Pick<Task, 'stoppedReason' | 'stopCode' | 'containers'>,
): 'out_of_memory' | 'crashed' | 'start_failed' {
  const container = task.containers?.find((c) => c.name === RUNNER_CONTAINER_NAME) ?? task.containers?.[0];
  if (/OutOfMemory/i.test(`${task.stoppedReason ?? ''} ${container?.reason ?? ''}`) || container?.exitCode === TASK_EXIT.outOfMemory)
    return 'out_of_memory';
  // The handler's process died without a result (a crash, process.exit): what the local host calls crashed.
  if (container?.exitCode === TASK_EXIT.crashed) return 'crashed';
  // Never placed, the image not pulled, the entry failed: the platform could not run it.
  return 'start_failed';
}

function log(level: 'INFO' | 'WARN' | 'ERROR', message: string, fields: LogFields) {
  console.error(JSON.stringify({ level, message, ...fields }));
}

/** Stores the request when it is not stored as an object yet and presigns the task's objects: the task's variables. */
async function taskEnvironment(
  fn: DeployedFunction,
  request: QueuedRequest,
  keys: ReturnType<typeof queuedTaskKeys>,
): Promise<TaskEnvironment> {
  const bucket = config.bucket('bundles');
  if (!request.invocation?.requestStored) {
    // Not a stored object (a small request kept in its record, or a direct caller): store what the task reads.
    const stored = { method: request.method, query: request.query, headers: request.headers, body: request.body.toString('base64') };
    await s3().send(
      new PutObjectCommand({ Bucket: bucket, Key: keys.request, Body: JSON.stringify(stored), ContentType: 'application/json' }),
    );
  }
  const presign = (command: GetObjectCommand | PutObjectCommand) => getSignedUrl(s3(), command, { expiresIn: PRESIGN_SECONDS });
  const [bundleUrl, requestUrl, resultUrl, consoleUrl] = await Promise.all([
    presign(new GetObjectCommand({ Bucket: bucket, Key: fn.bundle_key })),
    presign(new GetObjectCommand({ Bucket: bucket, Key: keys.request })),
    presign(new PutObjectCommand({ Bucket: bucket, Key: keys.result })),
    presign(new PutObjectCommand({ Bucket: bucket, Key: keys.console })),
  ]);
  return [
    { name: TASK_VARIABLES.bundleUrl, value: bundleUrl },
    { name: TASK_VARIABLES.requestUrl, value: requestUrl },
    { name: TASK_VARIABLES.resultUrl, value: resultUrl },
    { name: TASK_VARIABLES.consoleUrl, value: consoleUrl },
    { name: TASK_VARIABLES.functionUrl, value: fn.url },
  ];
}

/** A warm task that stopped without running its invocation: it never read the assignment, or never started. */
function ranNothing(task: Pick<Task, 'containers'>): boolean {
  const container = task.containers?.find((c) => c.name === RUNNER_CONTAINER_NAME) ?? task.containers?.[0];
  return container?.exitCode === undefined || container.exitCode === null || container.exitCode === TASK_EXIT.unassigned;
}

/**
 * One queued invocation in a fresh Fargate task (docs/functions.md, "Queued
 * invocations in the cloud"): presign the bundle and request GETs and the
 * result and console PUTs, RunTask, then poll the task and the result object
 * until the result appears or the task stops. The budget runs from the moment
 * the task is RUNNING; at its end the task is stopped (`timed_out`). A task
 * that is not running within the start bound is stopped and could not be run.
 */
export async function runQueuedTask(
  fn: DeployedFunction,
  request: QueuedRequest,
  budgetMs: number,
  signal: AbortSignal,
): Promise<QueuedResult> {
  const called = Date.now();
  const log_ = { function_id: fn.function_id, invocation_id: request.invocation?.id };
  if (signal.aborted) return { outcome: 'aborted', reply: null, console: [], runtimeMs: 0 };
  const invocation = request.invocation ?? { id: randomUUID(), team_id: fn.team_id };
  const keys = queuedTaskKeys(invocation);
  const poolSize = config.functionsWarmTasks();
  let refill: Promise<unknown> = Promise.resolve();
  let started: { environment: TaskEnvironment; warm: TakenWarmTask | null; taskArn: string };
  try {
    const environment = await taskEnvironment(fn, request, keys);
    let warm: TakenWarmTask | null = null;
    if (poolSize > 0) {
      warm = await takeAndAssign(environment, log_);
      // The slot just emptied (or an empty one) gets a new blank task while this invocation runs.
      refill = fillWarmPool(poolSize).catch((error) => log('WARN', 'queued run: the warm pool was not refilled', { error: String(error) }));
    }
    started = { environment, warm, taskArn: warm ? warm.taskArn : await runRunnerTask(environment, invocation.id) };
  } catch (error) {
    await refill;
    log('WARN', 'queued run: the task could not be started', { ...log_, error: String(error) });
    return { outcome: 'start_failed', reply: null, console: [], runtimeMs: Date.now() - called };
  }
  try {
    return await followTask({ ...started, called, keys, budgetMs, signal, log_, invocationId: invocation.id });
  } finally {
    await refill;
    if (started.warm) await discardAssignment(started.warm).catch(() => undefined);
  }
}

/** A blank task of the warm pool with the invocation's variables written where it looks, or null when none is ready. */
async function takeAndAssign(environment: TaskEnvironment, log_: LogFields): Promise<TakenWarmTask | null> {
  try {
    const warm = await takeWarmTask();
    if (warm) await assignWarmTask(warm, environment);
    return warm;
  } catch (error) {
    // The task taken (if any) is out of its slot and waits alone until its wait ends; this invocation starts its own.
    log('WARN', 'queued run: no warm task could be taken', { ...log_, error: String(error) });
    return null;
  }
}

interface Followed {
  environment: TaskEnvironment;
  warm: TakenWarmTask | null;
  taskArn: string;
  called: number;
  keys: ReturnType<typeof queuedTaskKeys>;
  budgetMs: number;
  signal: AbortSignal;
  log_: LogFields;
  invocationId: string;
}

async function stopTask(cluster: string, taskArn: string, reason: string, log_: LogFields): Promise<void> {
  try {
    await ecs().send(new StopTaskCommand({ cluster, task: taskArn, reason }));
  } catch (error) {
    log('ERROR', 'queued run: StopTask failed', { ...log_, task: taskArn, error: String(error) });
  }
}

/** The task's result and console objects, once its entry has uploaded them; null before. */
async function taskResult(bucket: string, keys: Followed['keys'], runtime: () => number): Promise<QueuedResult | null> {
  const result = await readJson<TaskResultObject>(bucket, keys.result);
  if (!result) return null;
  const console = (await readJson<ConsoleLine[]>(bucket, keys.console)) ?? [];
  if (result.outcome === 'start_failed') return { outcome: 'start_failed', reply: null, console, runtimeMs: runtime() };
  return {
    outcome: result.outcome,
    reply: { status: result.status, headers: result.headers, body: Buffer.from(result.body, 'base64') },
    console,
    runtimeMs: runtime(),
  };
}

/** After a stop, the task's entry uploads what the handler printed; wait a little for it. */
async function consoleAfterTaskStop(bucket: string, keys: Followed['keys']): Promise<ConsoleLine[]> {
  const until = Date.now() + Math.min(5000, taskPollMs() * 10);
  for (;;) {
    if (await objectExists(bucket, keys.console).catch(() => false))
      return (await readJson<ConsoleLine[]>(bucket, keys.console).catch(() => null)) ?? [];
    if (Date.now() >= until) return [];
    await sleep(taskPollMs(), new AbortController().signal);
  }
}

/** Polls the task and its result object until the result appears, the task stops, or the budget or start bound ends. */
async function followTask(run: Followed): Promise<QueuedResult> {
  let { warm, taskArn, called } = run;
  const { environment, keys, budgetMs, signal, log_ } = run;
  const bucket = config.bucket('bundles');
  const cluster = variable(cloudHostVariables.taskCluster);
  let runningSince: number | null = null;
  const runtime = () => (runningSince === null ? 0 : Date.now() - runningSince);
  const stop = (reason: string) => stopTask(cluster, taskArn, reason, log_);
  const finished = () => taskResult(bucket, keys, runtime);
  const consoleAfterStop = () => consoleAfterTaskStop(bucket, keys);

  try {
    for (;;) {
      if (signal.aborted) {
        await stop('Slipway: the platform stopped');
        return { outcome: 'aborted', reply: null, console: [], runtimeMs: runtime() };
      }
      const described = await ecs().send(new DescribeTasksCommand({ cluster, tasks: [taskArn] }));
      const task = described.tasks?.[0];
      if (runningSince === null && (task?.lastStatus === 'RUNNING' || task?.startedAt)) runningSince = Date.now();
      if (await objectExists(bucket, keys.result)) {
        const result = await finished();
        if (result) return result;
      }
      if (task?.lastStatus === 'STOPPED') {
        // The result may have landed between the two reads.
        const result = await finished();
        if (result) return result;
        if (warm && ranNothing(task)) {
          // The warm task ended its wait, or died, before it read the assignment: nothing ran, so a fresh task runs it.
          log('WARN', 'queued run: the warm task ran nothing; starting a task', {
            ...log_,
            task: taskArn,
            stopped_reason: task.stoppedReason,
          });
          warm = null;
          runningSince = null;
          called = Date.now();
          taskArn = await runRunnerTask(environment, run.invocationId);
          continue;
        }
        const outcome = stoppedTaskOutcome(task);
        log('WARN', 'queued run: the task stopped without a result', {
          ...log_,
          task: taskArn,
          outcome,
          stopped_reason: task.stoppedReason,
          stop_code: task.stopCode,
        });
        return { outcome, reply: null, console: outcome === 'start_failed' ? [] : await consoleAfterStop(), runtimeMs: runtime() };
      }
      if (runningSince !== null && Date.now() - runningSince >= budgetMs) {
        await stop('Slipway: the invocation reached its time budget');
        return { outcome: 'timed_out', reply: null, console: await consoleAfterStop(), runtimeMs: runtime() };
      }
      if (runningSince === null && Date.now() - called >= taskStartTimeoutMs()) {
        await stop('Slipway: the task did not start in time');
        log('WARN', 'queued run: the task did not start in time', { ...log_, task: taskArn, last_status: task?.lastStatus });
        return { outcome: 'start_failed', reply: null, console: [], runtimeMs: 0 };
      }
      const remaining = runningSince === null ? taskPollMs() : Math.min(taskPollMs(), Math.max(0, budgetMs - (Date.now() - runningSince)));
      await sleep(remaining, signal);
    }
  } catch (error) {
    // ECS or S3 failed while waiting: stop the task rather than leave it running unwatched.
    await stop('Slipway: the worker lost track of the task');
    log('ERROR', 'queued run: waiting for the task failed', { ...log_, task: taskArn, error: String(error) });
    return { outcome: 'start_failed', reply: null, console: [], runtimeMs: runtime() };
  }
}
