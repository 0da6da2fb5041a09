import { rmSync } from 'node:fs';
import { logger } from '../../../logger.ts';
import type { FunctionHost } from '../../host.ts';
import type { DeployedFunction } from '../../model.ts';
import { BlankPool, type LocalHostEvent } from './blank-pool.ts';
import { BundleCache } from './bundle-cache.ts';
import { InstancePool } from './instance-pool.ts';
import { runQueuedInSandbox, type StartedRunner } from './queued-run.ts';
import { makeSandboxRoot } from './runner-files.ts';
import { probeSandbox, type SandboxCapabilities } from '../../../sandbox/capabilities.ts';

/**
 * The local FunctionHost: the HTTPS door's requests go to sandboxed runner
 * instances on this machine (lib/sandbox/runner-instance.ts), pooled per
 * function (instance-pool.ts) and reached over one connection each (mux-client.ts).
 *
 * Cold starts are short because instances are started blank ahead of need
 * (node booted, node:http and undici loaded, sandboxed): a function takes one
 * and tells it over the control channel which bundle and URL to load. The
 * pre-started pool (FUNCTIONS_PREFORK, default 2: blank-pool.ts) refills in the
 * background. Bundles are cached on disk by sha256 (bundle-cache.ts).
 */

export type { LocalHostEvent } from './blank-pool.ts';

export interface LocalFunctionHostOptions {
  loadBundle: (fn: DeployedFunction) => Promise<Buffer>;
  onEvent?: (event: LocalHostEvent) => void;
  /**
   * Blank processes kept started (FUNCTIONS_PREFORK, default 2; 0 starts every one on demand). The door's
   * instances and the queued invocations' processes are taken from them.
   */
  prefork?: number;
  /** The sandbox probe's result (tests); probed at creation otherwise. */
  capabilities?: SandboxCapabilities;
}

export type LocalFunctionHost = FunctionHost & {
  stop(): Promise<void>;
  /** What the machine forced, one sentence each, for the platform's start log line. */
  fallbacks: string[];
  /** Running instances per function (tests and benchmarks). */
  instanceCount(fn: DeployedFunction): number;
};

export function createLocalFunctionHost(options: LocalFunctionHostOptions): LocalFunctionHost {
  const caps = options.capabilities ?? probeSandbox();
  const { root, runnerDir } = makeSandboxRoot();
  const emit = (event: LocalHostEvent) => {
    if (event.type === 'console')
      logger.debug('function console', { function_id: event.fn.function_id, stream: event.stream, line: event.line });
    try {
      options.onEvent?.(event);
    } catch (error) {
      logger.warn('function host event listener failed', { error: String(error) });
    }
  };
  const blanks = new BlankPool(caps, { root, runnerDir }, emit, options.prefork);
  const bundles = new BundleCache(root, options.loadBundle);
  const instances = new InstancePool(blanks, bundles, emit);
  let stopped = false;
  /** Aborts the queued runs when the host stops. */
  const stopping = new AbortController();

  /** A pre-started blank process for one queued invocation, never an instance of the pools. */
  async function runnerFor(fn: DeployedFunction): Promise<StartedRunner> {
    const blank = await blanks.take();
    blank.owner.fn = fn;
    return {
      sandbox: blank.sandbox,
      onConsole: (listener) => (blank.owner.console = listener),
      dispose: () => blanks.dispose(blank),
    };
  }

  blanks.refill();

  return {
    forwardHttp: instances.forwardHttp.bind(instances),
    // Queued door: a sandboxed process of its own per invocation, started ahead of need (queued-run.ts).
    runQueued: (fn, request, budgetMs, signal) =>
      stopped
        ? Promise.resolve({ outcome: 'aborted', reply: null, console: [], runtimeMs: 0 })
        : runQueuedInSandbox({
            runner: () => runnerFor(fn),
            bundleFile: bundles.pathOf(fn),
            fn,
            request,
            budgetMs,
            signal: AbortSignal.any([signal, stopping.signal]),
          }),
    fallbacks: caps.fallbacks,
    instanceCount: (fn) => instances.count(fn),
    async stop() {
      stopped = true;
      stopping.abort();
      instances.stop();
      await blanks.stop();
      await instances.deaths();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
