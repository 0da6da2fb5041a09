import { logger } from '../../../logger.ts';
import { FUNCTION_MEMORY_MB, type DeployedFunction } from '../../model.ts';
import { startEgressProxy, type EgressProxy, type EgressRefusal } from '../../../sandbox/egress-proxy.ts';
import type { SandboxCapabilities } from '../../../sandbox/capabilities.ts';
import { spawnSandbox, type SandboxProcess } from '../../../sandbox/runner-instance.ts';
import { config } from '../../../config.ts';

/** What the local host reports (telemetry, the console lines of `slipway dev`). */
export type LocalHostEvent =
  | { type: 'cold_start'; fn: DeployedFunction; bootMs: number }
  | { type: 'instance_stopped'; fn: DeployedFunction; instanceSeconds: number; peakMemoryBytes: number }
  | { type: 'limit'; fn: DeployedFunction; kind: 'out_of_memory' | 'instance_crashed' | 'instance_cap_wait' }
  | { type: 'limit'; fn: DeployedFunction; kind: 'egress_refused'; reason: EgressRefusal; target: string }
  | { type: 'console'; fn: DeployedFunction; stream: 'stdout' | 'stderr'; line: string };

/** A started sandbox with its egress proxy, assigned to a function or not yet. */
export interface Blank {
  sandbox: SandboxProcess;
  proxy: EgressProxy | null;
  /** The function it serves, once assigned (egress refusals and console lines are reported for it). */
  owner: { fn: DeployedFunction | null; console?: (stream: 'stdout' | 'stderr', line: string) => void };
  startedAt: number;
}

/** FUNCTIONS_PREFORK, default 2, unless the host was given a count. */
function preforkCount(option: number | undefined): number {
  if (option !== undefined) return Math.max(0, Math.floor(option));
  return config.functionsPrefork();
}

/**
 * Pre-forking: blank runner processes (node booted, node:http and undici loaded, sandboxed, no bundle yet)
 * started ahead of need, so that a cold start only loads the bundle. The door's instances and the queued
 * invocations' processes are taken from them; the pool refills in the background.
 */
export class BlankPool {
  private readonly blanks: Promise<Blank>[] = [];
  /** Every started blank not yet disposed of (assigned ones included). */
  private readonly live = new Set<Blank>();
  private readonly target: number;
  private stopped = false;

  constructor(
    private readonly caps: SandboxCapabilities,
    private readonly place: { root: string; runnerDir: string },
    private readonly emit: (event: LocalHostEvent) => void,
    prefork: number | undefined,
  ) {
    this.target = preforkCount(prefork);
  }

  private async startBlank(): Promise<Blank> {
    const owner: Blank['owner'] = { fn: null };
    let proxy: EgressProxy | null = null;
    const emit = this.emit;
    const startedAt = Date.now();
    const spawned = spawnSandbox(this.caps, {
      ...this.place,
      memoryBytes: FUNCTION_MEMORY_MB * 1024 * 1024,
      onConsole: (stream, line) => {
        if (owner.console) owner.console(stream, line);
        else if (owner.fn) emit({ type: 'console', fn: owner.fn, stream, line });
        else logger.debug('function runner console', { stream, line });
      },
      prepareEgress: async (socketPath) => {
        proxy = await startEgressProxy({
          socketPath,
          onRefused: ({ reason, target: to }) => {
            if (owner.fn) emit({ type: 'limit', fn: owner.fn, kind: 'egress_refused', reason, target: to });
          },
        });
      },
    });
    let sandbox: SandboxProcess;
    try {
      sandbox = await spawned;
    } catch (error) {
      await (proxy as EgressProxy | null)?.close();
      throw error;
    }
    return this.booted({ sandbox, proxy, owner, startedAt });
  }

  /** The blank once its runner says it has booted; disposed of if it dies first or the host stopped meanwhile. */
  private async booted(blank: Blank): Promise<Blank> {
    this.live.add(blank);
    void blank.sandbox.exited.then(() => this.live.delete(blank));
    try {
      await blank.sandbox.booted;
    } catch (error) {
      await this.dispose(blank);
      throw error;
    }
    if (this.stopped) {
      await this.dispose(blank);
      throw new Error('the functions host is stopped');
    }
    return blank;
  }

  async dispose(blank: Blank): Promise<void> {
    this.live.delete(blank);
    await blank.sandbox.stop();
    await blank.proxy?.close();
  }

  refill(): void {
    while (!this.stopped && this.blanks.length < this.target) {
      const started = this.startBlank();
      started.catch((error) => logger.warn('a pre-started function instance failed to start', { error: String(error) }));
      this.blanks.push(started);
    }
  }

  /** A booted blank: a pre-started one when there is one, else a new one. */
  async take(): Promise<Blank> {
    const next = this.blanks.shift();
    this.refill();
    if (next) {
      try {
        const blank = await next;
        const { child } = blank.sandbox;
        if (child.exitCode === null && child.signalCode === null) return blank;
        await this.dispose(blank);
      } catch {
        // Fall through to a fresh one.
      }
    }
    return this.startBlank();
  }

  /** Stops refilling and disposes of every blank, pre-started or assigned. */
  async stop(): Promise<void> {
    this.stopped = true;
    const pending = this.blanks.splice(0);
    await Promise.allSettled(pending.map(async (started) => this.dispose(await started)));
    await Promise.allSettled([...this.live].map((blank) => this.dispose(blank)));
  }
}
