import { copyFileSync, linkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ConsoleLine, QueuedRequest, QueuedResult } from '../../host.ts';
import type { DeployedFunction } from '../../model.ts';
import { logger } from '../../../logger.ts';
import type { SandboxProcess } from '../../../sandbox/runner-instance.ts';

/**
 * One queued invocation on this machine, in a sandboxed runner process of its
 * own (its own memory cgroup, bubblewrap, empty network namespace with the
 * egress proxy, node --permission), never an HTTPS-door instance, and gone when
 * the handler returns (the spec's container per call). The process is started
 * ahead of need by the host (node booted, undici loaded: lib/functions/hosts/local/local-host.ts),
 * so the call does not wait for it: the bundle and the request are placed in
 * its bundle folder, it is told to run them once, answers one result line on
 * the control channel and exits. Its stdout and stderr are the console
 * output. At the budget the process is killed (`timed_out`).
 */

interface RunnerResult {
  status: number;
  headers: [string, string][];
  body: string;
  outcome: 'response' | 'handler_error' | 'invalid_response' | 'start_failed';
}

/** A started, booted, blank runner process the host hands over for one invocation. */
export interface StartedRunner {
  sandbox: SandboxProcess;
  /** Where its console lines go from now on. */
  onConsole(listener: (stream: 'stdout' | 'stderr', line: string) => void): void;
  /** Stops it (if it still runs) and removes what it left: its cgroups, folder and egress proxy. */
  dispose(): Promise<void>;
}

export interface QueuedRunOptions {
  /** A blank runner process of this invocation's own. */
  runner: () => Promise<StartedRunner>;
  /** The bundle on the host (the host's cache); linked into the process's bundle folder. */
  bundleFile: Promise<string>;
  fn: DeployedFunction;
  request: QueuedRequest;
  budgetMs: number;
  signal: AbortSignal;
}

/** Puts the bundle and the request where the runner reads them (its bundle folder, read-only to it). */
function place(sandbox: SandboxProcess, bundle: string, request: QueuedRequest): string {
  try {
    linkSync(bundle, sandbox.bundleFile);
  } catch {
    copyFileSync(bundle, sandbox.bundleFile);
  }
  const { method, query, headers, body } = request;
  const file = join(dirname(sandbox.bundleFile), 'request.json');
  writeFileSync(file, JSON.stringify({ method, query, headers, body: body.toString('base64') }), { mode: 0o644 });
  return `${dirname(sandbox.bundleInside)}/request.json`;
}

export async function runQueuedInSandbox(options: QueuedRunOptions): Promise<QueuedResult> {
  let started = Date.now();
  const consoleLines: ConsoleLine[] = [];
  const elapsed = () => Date.now() - started;
  let bundle: string;
  let runner: StartedRunner;
  try {
    [bundle, runner] = await Promise.all([options.bundleFile, options.runner()]);
  } catch (error) {
    logger.warn('queued run: the runner could not start', { function_id: options.fn.function_id, error: String(error) });
    return { outcome: 'start_failed', reply: null, console: consoleLines, runtimeMs: elapsed() };
  }
  if (options.signal.aborted) {
    await runner.dispose();
    return { outcome: 'aborted', reply: null, console: consoleLines, runtimeMs: 0 };
  }
  const { sandbox } = runner;
  runner.onConsole((stream, line) => consoleLines.push({ at: new Date().toISOString(), stream, line }));
  let result: RunnerResult | null = null;
  sandbox.onMessage((message) => {
    if (!result && message.type === 'result') result = message as unknown as RunnerResult;
  });
  // Every stdio pipe closed: the result line and the last console lines are in.
  const closed = new Promise<void>((resolve) => sandbox.child.once('close', () => resolve()));
  let ending: 'timed_out' | 'aborted' | null = null;
  const stopFor = (why: 'timed_out' | 'aborted') => {
    if (ending) return;
    ending = why;
    void sandbox.stop();
  };
  // The budget runs from the moment the handler is handed its request.
  started = Date.now();
  sandbox.send({ type: 'once', bundle: sandbox.bundleInside, url: options.fn.url, request: place(sandbox, bundle, options.request) });
  const timer = setTimeout(() => stopFor('timed_out'), options.budgetMs);
  const onAbort = () => stopFor('aborted');
  options.signal.addEventListener('abort', onAbort, { once: true });
  try {
    const exit = await sandbox.exited;
    await Promise.race([closed, new Promise((r) => setTimeout(r, 500).unref())]);
    const runtimeMs = elapsed();
    const got = result as RunnerResult | null;
    if (got && got.outcome !== 'start_failed') {
      const reply = { status: got.status, headers: got.headers, body: Buffer.from(got.body, 'base64') };
      return { outcome: got.outcome, reply, console: consoleLines, runtimeMs };
    }
    if (ending) return { outcome: ending, reply: null, console: consoleLines, runtimeMs };
    if (exit.outOfMemory) return { outcome: 'out_of_memory', reply: null, console: consoleLines, runtimeMs };
    if (got?.outcome === 'start_failed') return { outcome: 'start_failed', reply: null, console: consoleLines, runtimeMs };
    return { outcome: 'crashed', reply: null, console: consoleLines, runtimeMs };
  } finally {
    clearTimeout(timer);
    options.signal.removeEventListener('abort', onAbort);
    await runner.dispose();
  }
}
