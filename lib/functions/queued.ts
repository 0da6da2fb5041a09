import { logger } from '../logger.ts';
import type { FunctionHost, QueuedResult } from './host.ts';
import { claimInvocation, getInvocation } from './invocation-records.ts';
import { finishInvocation, INVOCATION_ERRORS, joinHeaders, loadInvocationRequest, type Finish } from './invocations.ts';
import { functionBudgetMs } from './model.ts';
import { resolveQueuedRun } from './resolve.ts';
import type { FunctionTelemetry } from './telemetry.ts';

/**
 * The invocations worker's domain logic (the queue consumer in
 * handlers/workers/function-invocations.ts): claim, look the function up
 * again, run it through the host, store how it ended. Every way it ends
 * carries the spec's sentence.
 */

export interface RunDeps {
  host: FunctionHost;
  telemetry?: FunctionTelemetry;
  /** Aborts when the platform stops: the run is stopped and left to the reclaim. */
  signal?: AbortSignal;
}

/**
 * A running invocation older than the budget plus this was left by a worker that died: it covers a
 * Fargate task's start (up to 90 s in the cloud, counted before the budget) and the result's write.
 */
const STALE_RUNNING_SLACK_MS = 120_000;

const bare = (status: number) => ({ status, headers: {}, body: '' });

/** How a host's result ends the invocation. */
export function finishOf(result: QueuedResult): Finish {
  const stored = result.reply
    ? { status: result.reply.status, headers: joinHeaders(result.reply.headers), body: result.reply.body.toString('base64') }
    : bare(500);
  const base = { console: result.console, runtimeMs: result.runtimeMs };
  switch (result.outcome) {
    case 'response':
      return { ...base, status: 'completed', result: stored };
    case 'handler_error':
      return { ...base, status: 'failed', error_message: INVOCATION_ERRORS.handlerError, result: stored };
    case 'crashed':
      return { ...base, status: 'failed', error_message: INVOCATION_ERRORS.handlerError, result: bare(500) };
    case 'invalid_response':
      return { ...base, status: 'failed', error_message: INVOCATION_ERRORS.invalidResponse, result: stored };
    case 'out_of_memory':
      return { ...base, status: 'failed', error_message: INVOCATION_ERRORS.outOfMemory, result: bare(500) };
    case 'timed_out':
      return { ...base, status: 'timed_out', error_message: INVOCATION_ERRORS.timedOut, result: bare(504) };
    case 'start_failed':
    case 'aborted':
      return { ...base, status: 'failed', error_message: INVOCATION_ERRORS.couldNotRun, result: bare(500) };
  }
}

/**
 * Runs one invocation at most once. A message for an invocation that is
 * gone, already claimed or finished does nothing (a redelivery), except that
 * a `running` one far past its budget, whose worker died, ends as the spec's
 * restart sentence. Resolves `aborted` when the platform stopped mid-run (the
 * message should be left for redelivery and the reclaim), else `done`.
 */
/** A message for an invocation this worker did not claim: a `running` one whose worker died long ago is ended. */
async function endIfAbandoned(id: string): Promise<void> {
  const record = await getInvocation(id);
  if (record?.status !== 'running') return;
  const started = Date.parse(record.started_at ?? record.created_at);
  if (Date.now() - started > functionBudgetMs() + STALE_RUNNING_SLACK_MS) {
    await finishInvocation(record, {
      status: 'timed_out',
      error_message: INVOCATION_ERRORS.reclaimedRunning,
      result: bare(504),
      console: [],
    });
  }
}

export async function runInvocation(id: string, deps: RunDeps): Promise<'done' | 'skipped' | 'aborted'> {
  const running = await claimInvocation(id);
  if (!running) {
    await endIfAbandoned(id);
    return 'skipped';
  }
  // What the run needs, read at once: the live function, the team's enrolment and the stored request.
  const [{ fn }, request] = await Promise.all([
    resolveQueuedRun(running.project_id, running.team_id, running.function_name, running.deployment_id),
    loadInvocationRequest(running),
  ]);
  if (!fn) {
    await finishInvocation(running, { status: 'failed', error_message: INVOCATION_ERRORS.notDeployed, result: bare(500), console: [] });
    return 'done';
  }
  if (!request) {
    await finishInvocation(running, { status: 'failed', error_message: INVOCATION_ERRORS.couldNotRun, result: bare(500), console: [] });
    return 'done';
  }
  let result: QueuedResult;
  try {
    result = await deps.host.runQueued(fn, request, functionBudgetMs(), deps.signal ?? new AbortController().signal);
  } catch (error) {
    logger.error('queued function run failed', { invocation_id: id, error: (error as Error).message });
    result = { outcome: 'start_failed', reply: null, console: [], runtimeMs: 0 };
  }
  if (result.outcome === 'aborted') return 'aborted';
  await finishInvocation(running, finishOf(result));
  deps.telemetry?.backgroundInvocation(fn, result.runtimeMs / 1000);
  if (result.outcome === 'out_of_memory' || result.outcome === 'timed_out') {
    deps.telemetry?.limitHit(fn, result.outcome === 'timed_out' ? 'queued_timeout' : 'out_of_memory');
  }
  return 'done';
}
