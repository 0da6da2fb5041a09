import { copyFileSync, linkSync } from 'node:fs';
import { logger } from '../../../logger.ts';
import { FunctionHostError, type DoorForward, type DoorReply } from '../../host.ts';
import { CONCURRENT_REQUESTS_PER_INSTANCE, functionIdleMs, MAX_INSTANCES_PER_FUNCTION, type DeployedFunction } from '../../model.ts';
import type { Blank, BlankPool, LocalHostEvent } from './blank-pool.ts';
import type { BundleCache } from './bundle-cache.ts';
import { abortError, sendRequest, untilAborted, type Mux } from './mux-client.ts';

/** How long a failed start answers start_failed at once. */
const START_FAILURE_MEMORY_MS = 2_000;

type Death = 'out_of_memory' | 'instance_crashed' | 'stopped';

interface Instance {
  id: string;
  blank: Blank;
  fn: DeployedFunction;
  pool: Pool;
  /** Requests holding a slot (waiting for the start, or in flight). */
  active: number;
  state: 'starting' | 'ready' | 'dead';
  ready: Promise<void>;
  bootMs: number;
  /** The connection its requests go on, once one was sent. */
  mux: Mux | null;
  idleTimer?: NodeJS.Timeout;
  startedAt: number;
  /** How it died, once known. */
  death?: Promise<Death>;
  stopping: boolean;
}

interface Grant {
  instance: Instance;
  coldStart: boolean;
}

interface Waiter {
  resolve: (grant: Grant) => void;
  reject: (error: unknown) => void;
  signal: AbortSignal;
  onAbort: () => void;
}

interface Pool {
  key: string;
  fn: DeployedFunction;
  instances: Instance[];
  waiters: Waiter[];
}

const poolKey = (fn: DeployedFunction) => `${fn.function_id}/${fn.deployment_id}/${fn.bundle_sha256}`;

/**
 * The door's instances, per function deployment and bundle (function_id + deployment_id + bundle_sha256): up
 * to 10 requests at once each, a second instance beyond that, at most 3; a request beyond 30 waits, first come
 * first served, for a free slot until the door's signal aborts. An instance without requests for
 * functionIdleMs() is stopped. An instance is a blank process (blank-pool.ts) told which bundle to load.
 */
export class InstancePool {
  private readonly pools = new Map<string, Pool>();
  /** A bundle that failed to start is not started again for every request. */
  private readonly failedStarts = new Map<string, { error: unknown; until: number }>();
  private stopped = false;
  /** Frees a request's slot; one function for every request (no closure per request). */
  private readonly release = (instance: Instance): void => {
    instance.active--;
    if (instance.state === 'ready') this.scheduleIdle(instance);
    this.dispatch(instance.pool);
  };

  constructor(
    private readonly blanks: BlankPool,
    private readonly bundles: BundleCache,
    private readonly emit: (event: LocalHostEvent) => void,
  ) {}

  forwardHttp(fn: DeployedFunction, forward: DoorForward, signal: AbortSignal): Promise<DoorReply> {
    // The warm path: a ready instance has a free slot and nobody waits before this request. No await on it: each
    // is a turn and a promise per request.
    const pool = this.stopped || signal.aborted ? undefined : this.pools.get(poolKey(fn));
    if (pool && pool.waiters.length === 0 && !this.failedStarts.has(pool.key)) {
      const grant = this.grantSlot(pool);
      if (grant?.instance.state === 'ready') return sendRequest(grant.instance, forward, signal, grant.coldStart, this.release);
      if (grant) return this.forwardOn(pool, grant, forward, signal);
    }
    return this.forwardWaiting(fn, forward, signal);
  }

  /** A request that waits: for the pool's first instance, a free slot, or an instance still starting. */
  private async forwardWaiting(fn: DeployedFunction, forward: DoorForward, signal: AbortSignal): Promise<DoorReply> {
    if (this.stopped) throw new FunctionHostError('start_failed', 'the functions host is stopped');
    if (signal.aborted) throw abortError(signal);
    const key = poolKey(fn);
    const failed = this.failedStarts.get(key);
    if (failed && failed.until > Date.now()) throw failed.error;
    if (failed) this.failedStarts.delete(key);
    let pool = this.pools.get(key);
    if (!pool) {
      pool = { key, fn, instances: [], waiters: [] };
      this.pools.set(key, pool);
    }
    return this.forwardOn(pool, await this.acquire(pool, signal), forward, signal);
  }

  /** The request on the slot granted, once its instance is ready; another slot when that one died meanwhile. */
  private async forwardOn(pool: Pool, granted: Grant, forward: DoorForward, signal: AbortSignal): Promise<DoorReply> {
    for (let grant = granted; ; grant = await this.acquire(pool, signal)) {
      const { instance, coldStart } = grant;
      if (instance.state !== 'ready') {
        try {
          await untilAborted(instance.ready, signal);
        } catch (error) {
          this.release(instance);
          throw error;
        }
      }
      // It died between its start and this request: another slot.
      if (instance.state !== 'ready') this.release(instance);
      else return sendRequest(instance, forward, signal, coldStart, this.release);
    }
  }

  /** Running instances of the function (tests and benchmarks). */
  count(fn: DeployedFunction): number {
    return this.pools.get(poolKey(fn))?.instances.filter((i) => i.state !== 'dead').length ?? 0;
  }

  /** Refuses new and waiting requests and marks every instance stopping. */
  stop(): void {
    this.stopped = true;
    for (const pool of this.pools.values()) {
      for (const waiter of pool.waiters.splice(0)) waiter.reject(new FunctionHostError('start_failed', 'the functions host is stopped'));
      for (const instance of pool.instances) instance.stopping = true;
    }
  }

  /** Resolves once every instance has died (after the blanks were disposed of). */
  async deaths(): Promise<void> {
    await Promise.allSettled([...this.pools.values()].flatMap((pool) => pool.instances.map((i) => i.death)));
    this.pools.clear();
  }

  private startInstance(pool: Pool): Instance {
    const instance: Instance = {
      id: '',
      blank: undefined as unknown as Blank,
      fn: pool.fn,
      pool,
      active: 0,
      state: 'starting',
      ready: Promise.resolve(),
      bootMs: 0,
      mux: null,
      startedAt: Date.now(),
      stopping: false,
    };
    instance.ready = this.boot(instance);
    instance.ready.catch((error) => {
      // Failed start: gone from the pool; waiters behind it try again, later requests fail at once for a moment.
      this.failedStarts.set(pool.key, { error, until: Date.now() + START_FAILURE_MEMORY_MS });
      instance.state = 'dead';
      this.removeInstance(instance);
    });
    pool.instances.push(instance);
    return instance;
  }

  /** Takes a blank, gives it the bundle and waits until it has loaded it. */
  private async boot(instance: Instance): Promise<void> {
    const fn = instance.fn;
    const [taken, bundled] = await Promise.allSettled([this.blanks.take(), this.bundles.pathOf(fn)]);
    if (taken.status === 'rejected' || bundled.status === 'rejected') {
      if (taken.status === 'fulfilled') await this.blanks.dispose(taken.value);
      const error = taken.status === 'rejected' ? taken.reason : (bundled as PromiseRejectedResult).reason;
      throw new FunctionHostError(
        'start_failed',
        `no instance could be started: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    const blank = taken.value;
    instance.blank = blank;
    instance.id = blank.sandbox.id;
    blank.owner.fn = fn;
    instance.death = blank.sandbox.exited.then((exit) =>
      instance.stopping ? 'stopped' : exit.outOfMemory ? 'out_of_memory' : 'instance_crashed',
    );
    void instance.death.then((how) => this.onDeath(instance, how));
    try {
      linkSync(bundled.value, blank.sandbox.bundleFile);
    } catch {
      copyFileSync(bundled.value, blank.sandbox.bundleFile);
    }
    try {
      await loadBundle(blank, fn);
    } catch (error) {
      instance.stopping = true;
      await this.blanks.dispose(blank);
      throw error;
    }
    instance.state = 'ready';
    instance.bootMs = Date.now() - instance.startedAt;
    this.emit({ type: 'cold_start', fn, bootMs: instance.bootMs });
  }

  private removeInstance(instance: Instance): void {
    const pool = instance.pool;
    const at = pool.instances.indexOf(instance);
    if (at >= 0) pool.instances.splice(at, 1);
    clearTimeout(instance.idleTimer);
    instance.mux?.socket.destroy();
    if (pool.instances.length === 0 && pool.waiters.length === 0) this.pools.delete(pool.key);
    else this.dispatch(pool);
  }

  private onDeath(instance: Instance, how: Death): void {
    const wasReady = instance.state === 'ready';
    instance.state = 'dead';
    if (wasReady || how !== 'stopped') {
      this.emit({
        type: 'instance_stopped',
        fn: instance.fn,
        instanceSeconds: (Date.now() - instance.startedAt) / 1000,
        peakMemoryBytes: instance.blank.sandbox.peakMemoryBytes(),
      });
    }
    if (how !== 'stopped') {
      this.emit({ type: 'limit', fn: instance.fn, kind: how });
      logger.warn('function instance died', { function_id: instance.fn.function_id, instance_id: instance.id, kind: how });
    }
    this.removeInstance(instance);
    void this.blanks.dispose(instance.blank);
  }

  private async stopInstance(instance: Instance): Promise<void> {
    if (instance.stopping) return;
    instance.stopping = true;
    await this.blanks.dispose(instance.blank);
    await instance.death;
  }

  private scheduleIdle(instance: Instance): void {
    clearTimeout(instance.idleTimer);
    if (instance.active > 0 || instance.state !== 'ready') return;
    instance.idleTimer = setTimeout(() => {
      if (instance.active === 0 && instance.state === 'ready') void this.stopInstance(instance);
    }, functionIdleMs());
    instance.idleTimer.unref();
  }

  /** A slot for a request: on a running instance, on one starting, on a new one, or null (all full). */
  private grantSlot(pool: Pool): Grant | null {
    // One pass, no arrays: this runs for every request.
    let ready: Instance | undefined;
    let starting: Instance | undefined;
    let alive = 0;
    for (const i of pool.instances) {
      if (i.state === 'dead' || i.stopping) continue;
      alive++;
      if (i.active >= CONCURRENT_REQUESTS_PER_INSTANCE) continue;
      if (i.state === 'ready') {
        if (!ready || i.active < ready.active) ready = i;
      } else starting ??= i;
    }
    let instance = ready ?? starting;
    let coldStart = !ready;
    if (!instance && alive < MAX_INSTANCES_PER_FUNCTION) {
      instance = this.startInstance(pool);
      coldStart = true;
    }
    if (!instance) return null;
    instance.active++;
    clearTimeout(instance.idleTimer);
    return { instance, coldStart };
  }

  private dispatch(pool: Pool): void {
    while (pool.waiters.length > 0) {
      const grant = this.grantSlot(pool);
      if (!grant) return;
      const waiter = pool.waiters.shift()!;
      waiter.signal.removeEventListener('abort', waiter.onAbort);
      waiter.resolve(grant);
    }
  }

  private acquire(pool: Pool, signal: AbortSignal): Promise<Grant> {
    if (pool.waiters.length === 0) {
      const grant = this.grantSlot(pool);
      if (grant) return Promise.resolve(grant);
    }
    this.emit({ type: 'limit', fn: pool.fn, kind: 'instance_cap_wait' });
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        signal,
        onAbort: () => {
          const at = pool.waiters.indexOf(waiter);
          if (at >= 0) pool.waiters.splice(at, 1);
          reject(abortError(signal));
        },
      };
      pool.waiters.push(waiter);
      signal.addEventListener('abort', waiter.onAbort, { once: true });
    });
  }
}

/** Tells a blank which bundle and URL to load; resolves once it has, rejects when it fails or exits first. */
function loadBundle(blank: Blank, fn: DeployedFunction): Promise<void> {
  const loaded = new Promise<void>((resolve, reject) => {
    blank.sandbox.onMessage((message) => {
      if (message.type === 'loaded') resolve();
      if (message.type === 'load_failed')
        reject(new FunctionHostError('start_failed', `the bundle failed to load: ${message.message ?? ''}`));
    });
    void blank.sandbox.exited.then(() => reject(new FunctionHostError('start_failed', 'the instance exited while loading the bundle')));
  });
  blank.sandbox.send({ type: 'load', bundle: blank.sandbox.bundleInside, url: fn.url });
  return loaded;
}
