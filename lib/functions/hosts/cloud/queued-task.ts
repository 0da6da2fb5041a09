import { randomUUID } from 'node:crypto';
import { DescribeTasksCommand, ECSClient, RunTaskCommand, StopTaskCommand, type Task } from '@aws-sdk/client-ecs';
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { lazyClient } from '../../../aws/clients.ts';
import { s3 } from '../../../aws/s3.ts';
import { config } from '../../../config.ts';
import type { ConsoleLine, QueuedRequest, QueuedResult } from '../../host.ts';
import type { DeployedFunction } from '../../model.ts';
import { cloudHostVariables, variable } from './variables.ts';

// The cloud host's queued invocations: one Fargate task of the runner image per invocation.

/** The runner's container in the task definition (infra/functions-runtime.ts). */
export const RUNNER_CONTAINER_NAME = 'runner';

/** The task's environment (lib/functions/runner/task.mjs reads the same names). */
export const TASK_VARIABLES = {
  bundleUrl: 'SLIPWAY_BUNDLE_URL',
  requestUrl: 'SLIPWAY_REQUEST_URL',
  resultUrl: 'SLIPWAY_RESULT_URL',
  consoleUrl: 'SLIPWAY_CONSOLE_URL',
  functionUrl: 'SLIPWAY_FUNCTION_URL',
} as const;

/** How the task entry exits (task.mjs `TASK_EXIT`). */
export const TASK_EXIT = { result: 0, crashed: 3, outOfMemory: 137, stopped: 143, failed: 1 } as const;

/** How long a task may take to be placed, pull the image and start; the budget runs from then. */
export function taskStartTimeoutMs(): number {
  return config.functionsTaskStartTimeoutMs();
}

/** How often the worker looks at the task and the result object; FUNCTIONS_TASK_POLL_MS shortens it for tests. */
export function taskPollMs(): number {
  return config.functionsTaskPollMs();
}

/** RunTask refuses overrides longer than this (the JSON of the override structure included). */
export const MAX_OVERRIDE_CHARS = 8192;

/** Presigned URLs outlive the task's start and budget with room to spare. */
const PRESIGN_SECONDS = 15 * 60;

/** The task's objects, under the invocation's prefix (lib/functions/invocations.ts keeps request.json, result.json and console.json there). */
export function queuedTaskKeys(invocation: { id: string; team_id: string }) {
  const prefix = `invocations/${invocation.team_id}/${invocation.id}/`;
  return { request: `${prefix}request.json`, result: `${prefix}task-result.json`, console: `${prefix}task-console.json` };
}

const ecs = lazyClient('ecs', (opts) => new ECSClient({ region: opts.region, endpoint: opts.endpoint }));

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

function log(level: 'INFO' | 'WARN' | 'ERROR', message: string, fields: Record<string, unknown>) {
  console.error(JSON.stringify({ level, message, ...fields }));
}

/** Stores the request when it is not stored as an object yet, presigns the task's objects and starts the task: its ARN. */
async function startTask(
  fn: DeployedFunction,
  request: QueuedRequest,
  invocation: { id: string; team_id: string },
  keys: ReturnType<typeof queuedTaskKeys>,
): Promise<string> {
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
  const overrides = {
    containerOverrides: [
      {
        name: RUNNER_CONTAINER_NAME,
        environment: [
          { name: TASK_VARIABLES.bundleUrl, value: bundleUrl },
          { name: TASK_VARIABLES.requestUrl, value: requestUrl },
          { name: TASK_VARIABLES.resultUrl, value: resultUrl },
          { name: TASK_VARIABLES.consoleUrl, value: consoleUrl },
          { name: TASK_VARIABLES.functionUrl, value: fn.url },
        ],
      },
    ],
  };
  const overrideChars = JSON.stringify(overrides).length;
  if (overrideChars > MAX_OVERRIDE_CHARS)
    throw new Error(`the task overrides are ${overrideChars} characters, over RunTask's ${MAX_OVERRIDE_CHARS}`);
  const started = await ecs().send(
    new RunTaskCommand({
      cluster: variable(cloudHostVariables.taskCluster),
      taskDefinition: variable(cloudHostVariables.taskDefinitionArn),
      launchType: 'FARGATE',
      count: 1,
      // At most 36 characters: an invocation id fits, and tells operators which invocation a task ran.
      startedBy: invocation.id.slice(0, 36),
      networkConfiguration: {
        awsvpcConfiguration: {
          subnets: variable(cloudHostVariables.subnetIds).split(','),
          securityGroups: [variable(cloudHostVariables.securityGroupId)],
          assignPublicIp: 'DISABLED',
        },
      },
      overrides,
    }),
  );
  const task = started.tasks?.[0];
  if (!task?.taskArn) {
    const failure = started.failures?.map((f) => `${f.reason ?? 'unknown'}${f.detail ? ` (${f.detail})` : ''}`).join('; ');
    throw new Error(`RunTask started no task: ${failure || 'no reason given'}`);
  }
  return task.taskArn;
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
  const bucket = config.bucket('bundles');
  const log_ = { function_id: fn.function_id, invocation_id: request.invocation?.id };
  if (signal.aborted) return { outcome: 'aborted', reply: null, console: [], runtimeMs: 0 };
  const invocation = request.invocation ?? { id: randomUUID(), team_id: fn.team_id };
  const keys = queuedTaskKeys(invocation);
  let taskArn: string;
  try {
    taskArn = await startTask(fn, request, invocation, keys);
  } catch (error) {
    log('WARN', 'queued run: the task could not be started', { ...log_, error: String(error) });
    return { outcome: 'start_failed', reply: null, console: [], runtimeMs: Date.now() - called };
  }

  const cluster = variable(cloudHostVariables.taskCluster);
  let runningSince: number | null = null;
  const runtime = () => (runningSince === null ? 0 : Date.now() - runningSince);
  const stop = async (reason: string) => {
    try {
      await ecs().send(new StopTaskCommand({ cluster, task: taskArn, reason }));
    } catch (error) {
      log('ERROR', 'queued run: StopTask failed', { ...log_, task: taskArn, error: String(error) });
    }
  };
  const finished = async (): Promise<QueuedResult | null> => {
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
  };
  /** After a stop, the task's entry uploads what the handler printed; wait a little for it. */
  const consoleAfterStop = async (): Promise<ConsoleLine[]> => {
    const until = Date.now() + Math.min(5000, taskPollMs() * 10);
    for (;;) {
      if (await objectExists(bucket, keys.console).catch(() => false))
        return (await readJson<ConsoleLine[]>(bucket, keys.console).catch(() => null)) ?? [];
      if (Date.now() >= until) return [];
      await sleep(taskPollMs(), new AbortController().signal);
    }
  };

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
