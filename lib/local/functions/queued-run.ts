import { copyFileSync, linkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ConsoleLine, QueuedRequest, QueuedResult } from '../../functions/host.ts';
import type { DeployedFunction } from '../../functions/model.ts';
import { logger } from '../../http/logger.ts';
import { startEgressProxy, type EgressProxy } from './egress-proxy.ts';
import { spawnSandbox, type SandboxCapabilities, type SandboxProcess } from './sandbox.ts';

/**
 * One queued invocation on this machine: a FRESH sandboxed runner process in
 * `once` mode (its own memory cgroup, bubblewrap, empty network namespace
 * with the egress proxy, node --permission), never an HTTPS-door instance.
 * The request is a file in the bundle folder, the result one JSON line on the
 * control channel; stdout and stderr are the console output. At the budget
 * the process is killed (`timed_out`).
 */

interface RunnerResult {
  status: number;
  headers: [string, string][];
  body: string;
  outcome: 'response' | 'handler_error' | 'invalid_response' | 'start_failed';
}

export interface QueuedRunOptions {
  caps: SandboxCapabilities;
  root: string;
  runnerPath: string;
  /** The bundle on the host (the host's cache); linked into the sandbox. */
  bundleFile: Promise<string>;
  fn: DeployedFunction;
  request: QueuedRequest;
  budgetMs: number;
  signal: AbortSignal;
}

export async function runQueuedInSandbox(options: QueuedRunOptions): Promise<QueuedResult> {
  const started = Date.now();
  const consoleLines: ConsoleLine[] = [];
  const elapsed = () => Date.now() - started;
  let bundle: string;
  try {
    bundle = await options.bundleFile;
  } catch (error) {
    logger.warn('queued run: bundle not available', { function_id: options.fn.function_id, error: String(error) });
    return { outcome: 'start_failed', reply: null, console: consoleLines, runtimeMs: elapsed() };
  }
  if (options.signal.aborted) return { outcome: 'aborted', reply: null, console: consoleLines, runtimeMs: 0 };

  let proxy: EgressProxy | null = null;
  let sandbox: SandboxProcess;
  try {
    sandbox = await spawnSandbox(options.caps, {
      root: options.root,
      runnerPath: options.runnerPath,
      onConsole: (stream, line) => consoleLines.push({ at: new Date().toISOString(), stream, line }),
      prepareEgress: async (socketPath) => {
        proxy = await startEgressProxy({ socketPath });
      },
      once: {
        url: options.fn.url,
        place: (dir) => {
          const target = join(dir, 'bundle.mjs');
          try {
            linkSync(bundle, target);
          } catch {
            copyFileSync(bundle, target);
          }
          const { method, query, headers, body } = options.request;
          writeFileSync(join(dir, 'request.json'), JSON.stringify({ method, query, headers, body: body.toString('base64') }), { mode: 0o644 });
        },
      },
    });
  } catch (error) {
    await (proxy as EgressProxy | null)?.close();
    logger.warn('queued run: the runner could not start', { function_id: options.fn.function_id, error: String(error) });
    return { outcome: 'start_failed', reply: null, console: consoleLines, runtimeMs: elapsed() };
  }

  let result: RunnerResult | null = null;
  sandbox.onMessage((message) => {
    if (!result && 'outcome' in message) result = message as unknown as RunnerResult;
  });
  // Every stdio pipe closed: the result line and the last console lines are in.
  const closed = new Promise<void>((resolve) => sandbox.child.once('close', () => resolve()));
  let ending: 'timed_out' | 'aborted' | null = null;
  const stopFor = (why: 'timed_out' | 'aborted') => {
    if (ending) return;
    ending = why;
    void sandbox.stop();
  };
  const timer = setTimeout(() => stopFor('timed_out'), Math.max(0, options.budgetMs - elapsed()));
  const onAbort = () => stopFor('aborted');
  options.signal.addEventListener('abort', onAbort, { once: true });
  try {
    const exit = await sandbox.exited;
    await Promise.race([closed, new Promise((r) => setTimeout(r, 500).unref())]);
    const runtimeMs = elapsed();
    const got = result as RunnerResult | null;
    if (got && got.outcome !== 'start_failed') {
      return {
        outcome: got.outcome,
        reply: { status: got.status, headers: got.headers, body: Buffer.from(got.body, 'base64') },
        console: consoleLines,
        runtimeMs,
      };
    }
    if (ending) return { outcome: ending, reply: null, console: consoleLines, runtimeMs };
    if (exit.outOfMemory) return { outcome: 'out_of_memory', reply: null, console: consoleLines, runtimeMs };
    if (got?.outcome === 'start_failed') return { outcome: 'start_failed', reply: null, console: consoleLines, runtimeMs };
    return { outcome: 'crashed', reply: null, console: consoleLines, runtimeMs };
  } finally {
    clearTimeout(timer);
    options.signal.removeEventListener('abort', onAbort);
    await sandbox.stop();
    await (proxy as EgressProxy | null)?.close();
  }
}
