import { createHash } from 'node:crypto';
import { chmodSync, existsSync, linkSync, mkdirSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { logger } from '../../../logger.ts';
import {
  creditPayload,
  FRAME,
  frameParser,
  frameWriter,
  HOP_BY_HOP,
  OUTCOME_HEADER,
  receiveBody,
  sendBody,
  SendWindow,
  type FrameWrite,
  type ReceivedBody,
} from '../../runner/protocol.mjs';
import { FunctionHostError, type DoorForward, type DoorReply, type FunctionHost } from '../../host.ts';
import { CONCURRENT_REQUESTS_PER_INSTANCE, functionIdleMs, MAX_INSTANCES_PER_FUNCTION, type DeployedFunction } from '../../model.ts';
import { startEgressProxy, type EgressProxy, type EgressRefusal } from './egress-proxy.ts';
import { runQueuedInSandbox, type StartedRunner } from './queued-run.ts';
import { makeSandboxRoot, probeSandbox, spawnSandbox, type SandboxCapabilities, type SandboxProcess } from './sandbox.ts';

/**
 * The local FunctionHost: the HTTPS door's requests go to sandboxed runner
 * instances on this machine (lib/functions/hosts/local/sandbox.ts).
 *
 * Instances are per function deployment and bundle (function_id +
 * deployment_id + bundle_sha256): up to 10 requests at once each, a second
 * instance beyond that, at most 3; a request beyond 30 waits, first come
 * first served, for a free slot until the door's signal aborts. An instance
 * without requests for functionIdleMs() is stopped.
 *
 * Cold starts are short because instances are started blank ahead of need
 * (node booted, node:http and undici loaded, sandboxed): a function takes one
 * and tells it over the control channel which bundle and URL to load. The
 * pre-started pool (FUNCTIONS_PREFORK, default 2) refills in the background.
 * Bundles are cached on disk by sha256.
 */

export type LocalHostEvent =
  | { type: 'cold_start'; fn: DeployedFunction; bootMs: number }
  | { type: 'instance_stopped'; fn: DeployedFunction; instanceSeconds: number; peakMemoryBytes: number }
  | { type: 'limit'; fn: DeployedFunction; kind: 'out_of_memory' | 'instance_crashed' | 'instance_cap_wait' }
  | { type: 'limit'; fn: DeployedFunction; kind: 'egress_refused'; reason: EgressRefusal; target: string }
  | { type: 'console'; fn: DeployedFunction; stream: 'stdout' | 'stderr'; line: string };

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

/** How long a failed start answers start_failed at once. */
const START_FAILURE_MEMORY_MS = 2_000;

/** One connection to an instance: every request to it is a stream on it (runner/protocol.mjs, FRAME). */
interface Mux {
  socket: Socket;
  write: FrameWrite;
  streams: Map<number, { onFrame: (type: number, payload: Buffer) => void; onClose: (error: Error) => void }>;
  nextId: number;
}

function openMux(path: string): Mux {
  const socket = connect(path);
  const mux: Mux = { socket, write: frameWriter(socket), streams: new Map(), nextId: 1 };
  let failure: Error | null = null;
  socket.on('error', (error) => (failure = error));
  socket.on(
    'data',
    frameParser((type, id, payload) => mux.streams.get(id)?.onFrame(type, payload)),
  );
  socket.on('close', () => {
    const error = failure ?? new Error('the instance closed the connection');
    for (const stream of [...mux.streams.values()]) stream.onClose(error);
    mux.streams.clear();
  });
  return mux;
}

function preforkCount(option: number | undefined): number {
  if (option !== undefined) return Math.max(0, Math.floor(option));
  const raw = process.env.FUNCTIONS_PREFORK;
  const value = Number(raw);
  return raw !== undefined && raw.trim() !== '' && Number.isFinite(value) && value >= 0 ? Math.floor(value) : 2;
}

/** A started sandbox with its egress proxy, assigned to a function or not yet. */
interface Blank {
  sandbox: SandboxProcess;
  proxy: EgressProxy | null;
  /** The function it serves, once assigned (egress refusals and console lines are reported for it). */
  owner: { fn: DeployedFunction | null; console?: (stream: 'stdout' | 'stderr', line: string) => void };
  startedAt: number;
}

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
  death?: Promise<'out_of_memory' | 'instance_crashed' | 'stopped'>;
  stopping: boolean;
}

interface Waiter {
  resolve: (grant: { instance: Instance; coldStart: boolean }) => void;
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

function abortError(signal: AbortSignal): Error {
  const reason = signal.reason;
  const error = new Error(reason instanceof Error ? reason.message : 'The operation was aborted', { cause: reason });
  error.name = 'AbortError';
  return error;
}

/** The promise, or an AbortError as soon as the signal aborts (the promise runs on). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortError(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

export function createLocalFunctionHost(options: LocalFunctionHostOptions): LocalFunctionHost {
  const caps = options.capabilities ?? probeSandbox();
  const { root, runnerDir } = makeSandboxRoot();
  const bundleCache = join(root, 'bundles');
  mkdirSync(bundleCache, { mode: 0o711 });
  chmodSync(bundleCache, 0o711);
  const emit = (event: LocalHostEvent) => {
    if (event.type === 'console')
      logger.debug('function console', { function_id: event.fn.function_id, stream: event.stream, line: event.line });
    try {
      options.onEvent?.(event);
    } catch (error) {
      logger.warn('function host event listener failed', { error: String(error) });
    }
  };
  const pools = new Map<string, Pool>();
  /** A bundle that failed to start is not started again for every request. */
  const failedStarts = new Map<string, { error: unknown; until: number }>();
  const bundles = new Map<string, Promise<string>>();
  const target = preforkCount(options.prefork);
  const blanks: Promise<Blank>[] = [];
  const live = new Set<Blank>();
  let stopped = false;
  /** Aborts the queued runs when the host stops. */
  const stopping = new AbortController();

  // ---- blank instances

  async function startBlank(): Promise<Blank> {
    const owner: Blank['owner'] = { fn: null };
    let proxy: EgressProxy | null = null;
    const startedAt = Date.now();
    const spawned = spawnSandbox(caps, {
      root,
      runnerDir,
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
    const blank: Blank = { sandbox, proxy, owner, startedAt };
    live.add(blank);
    void sandbox.exited.then(() => live.delete(blank));
    try {
      await sandbox.booted;
    } catch (error) {
      await disposeBlank(blank);
      throw error;
    }
    if (stopped) {
      await disposeBlank(blank);
      throw new Error('the functions host is stopped');
    }
    return blank;
  }

  async function disposeBlank(blank: Blank): Promise<void> {
    live.delete(blank);
    await blank.sandbox.stop();
    await blank.proxy?.close();
  }

  function refill(): void {
    while (!stopped && blanks.length < target) {
      const started = startBlank();
      started.catch((error) => logger.warn('a pre-started function instance failed to start', { error: String(error) }));
      blanks.push(started);
    }
  }

  /** A booted blank: a pre-started one when there is one, else a new one. */
  async function takeBlank(): Promise<Blank> {
    const next = blanks.shift();
    refill();
    if (next) {
      try {
        const blank = await next;
        const { child } = blank.sandbox;
        if (child.exitCode === null && child.signalCode === null) return blank;
        await disposeBlank(blank);
      } catch {
        // Fall through to a fresh one.
      }
    }
    return startBlank();
  }

  // ---- bundles

  function bundlePath(fn: DeployedFunction): Promise<string> {
    const cacheKey = `${fn.deployment_id}/${fn.function_id}/${fn.bundle_sha256}`;
    let path = bundles.get(cacheKey);
    if (!path) {
      path = (async () => {
        const bytes = await options.loadBundle(fn);
        const sha = createHash('sha256').update(bytes).digest('hex');
        const file = join(bundleCache, `${sha}.mjs`);
        if (!existsSync(file)) {
          writeFileSync(`${file}.tmp`, bytes, { mode: 0o644 });
          rmSync(file, { force: true });
          linkSync(`${file}.tmp`, file);
          rmSync(`${file}.tmp`, { force: true });
        }
        return file;
      })();
      bundles.set(cacheKey, path);
      path.catch(() => bundles.delete(cacheKey));
    }
    return path;
  }

  // ---- instances

  function startInstance(pool: Pool): Instance {
    const startedAt = Date.now();
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
      startedAt,
      stopping: false,
    };
    instance.ready = (async () => {
      const [taken, bundled] = await Promise.allSettled([takeBlank(), bundlePath(pool.fn)]);
      if (taken.status === 'rejected' || bundled.status === 'rejected') {
        if (taken.status === 'fulfilled') await disposeBlank(taken.value);
        const error = taken.status === 'rejected' ? taken.reason : (bundled as PromiseRejectedResult).reason;
        throw new FunctionHostError(
          'start_failed',
          `no instance could be started: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      const blank = taken.value;
      const file = bundled.value;
      instance.blank = blank;
      instance.id = blank.sandbox.id;
      blank.owner.fn = pool.fn;
      instance.death = blank.sandbox.exited.then((exit) =>
        instance.stopping ? 'stopped' : exit.outOfMemory ? 'out_of_memory' : 'instance_crashed',
      );
      void instance.death.then((how) => onDeath(instance, how));
      try {
        linkSync(file, blank.sandbox.bundleFile);
      } catch {
        copyFileSync(file, blank.sandbox.bundleFile);
      }
      const loaded = new Promise<void>((resolve, reject) => {
        blank.sandbox.onMessage((message) => {
          if (message.type === 'loaded') resolve();
          if (message.type === 'load_failed')
            reject(new FunctionHostError('start_failed', `the bundle failed to load: ${message.message ?? ''}`));
        });
        void blank.sandbox.exited.then(() => reject(new FunctionHostError('start_failed', 'the instance exited while loading the bundle')));
      });
      blank.sandbox.send({ type: 'load', bundle: blank.sandbox.bundleInside, url: pool.fn.url });
      try {
        await loaded;
      } catch (error) {
        instance.stopping = true;
        await disposeBlank(blank);
        throw error;
      }
      instance.state = 'ready';
      instance.bootMs = Date.now() - startedAt;
      emit({ type: 'cold_start', fn: pool.fn, bootMs: instance.bootMs });
    })();
    instance.ready.catch((error) => {
      // Failed start: gone from the pool; waiters behind it try again, later requests fail at once for a moment.
      failedStarts.set(pool.key, { error, until: Date.now() + START_FAILURE_MEMORY_MS });
      instance.state = 'dead';
      removeInstance(instance);
    });
    pool.instances.push(instance);
    return instance;
  }

  function removeInstance(instance: Instance): void {
    const pool = instance.pool;
    const at = pool.instances.indexOf(instance);
    if (at >= 0) pool.instances.splice(at, 1);
    clearTimeout(instance.idleTimer);
    instance.mux?.socket.destroy();
    if (pool.instances.length === 0 && pool.waiters.length === 0) pools.delete(pool.key);
    else dispatch(pool);
  }

  function onDeath(instance: Instance, how: 'out_of_memory' | 'instance_crashed' | 'stopped'): void {
    const wasReady = instance.state === 'ready';
    instance.state = 'dead';
    if (wasReady || how !== 'stopped') {
      emit({
        type: 'instance_stopped',
        fn: instance.fn,
        instanceSeconds: (Date.now() - instance.startedAt) / 1000,
        peakMemoryBytes: instance.blank.sandbox.peakMemoryBytes(),
      });
    }
    if (how !== 'stopped') {
      emit({ type: 'limit', fn: instance.fn, kind: how });
      logger.warn('function instance died', { function_id: instance.fn.function_id, instance_id: instance.id, kind: how });
    }
    removeInstance(instance);
    void disposeBlank(instance.blank);
  }

  async function stopInstance(instance: Instance): Promise<void> {
    if (instance.stopping) return;
    instance.stopping = true;
    await disposeBlank(instance.blank);
    await instance.death;
  }

  function scheduleIdle(instance: Instance): void {
    clearTimeout(instance.idleTimer);
    if (instance.active > 0 || instance.state !== 'ready') return;
    instance.idleTimer = setTimeout(() => {
      if (instance.active === 0 && instance.state === 'ready') void stopInstance(instance);
    }, functionIdleMs());
    instance.idleTimer.unref();
  }

  /** A slot for a request: on a running instance, on one starting, on a new one, or null (all full). */
  function grantSlot(pool: Pool): { instance: Instance; coldStart: boolean } | null {
    const usable = pool.instances.filter((i) => i.state !== 'dead' && !i.stopping && i.active < CONCURRENT_REQUESTS_PER_INSTANCE);
    const ready = usable.filter((i) => i.state === 'ready').sort((a, b) => a.active - b.active)[0];
    let instance = ready ?? usable.find((i) => i.state === 'starting');
    let coldStart = !ready;
    const alive = pool.instances.filter((i) => i.state !== 'dead' && !i.stopping).length;
    if (!instance && alive < MAX_INSTANCES_PER_FUNCTION) {
      instance = startInstance(pool);
      coldStart = true;
    }
    if (!instance) return null;
    instance.active++;
    clearTimeout(instance.idleTimer);
    return { instance, coldStart };
  }

  function dispatch(pool: Pool): void {
    while (pool.waiters.length > 0) {
      const grant = grantSlot(pool);
      if (!grant) return;
      const waiter = pool.waiters.shift()!;
      waiter.signal.removeEventListener('abort', waiter.onAbort);
      waiter.resolve(grant);
    }
  }

  function release(instance: Instance): void {
    instance.active--;
    if (instance.state === 'ready') scheduleIdle(instance);
    dispatch(instance.pool);
  }

  function acquire(pool: Pool, signal: AbortSignal): Promise<{ instance: Instance; coldStart: boolean }> {
    if (pool.waiters.length === 0) {
      const grant = grantSlot(pool);
      if (grant) return Promise.resolve(grant);
    }
    emit({ type: 'limit', fn: pool.fn, kind: 'instance_cap_wait' });
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

  // ---- one request

  async function failureOf(instance: Instance, error: unknown): Promise<FunctionHostError> {
    // The connection broke: was it the instance dying? Give the exit a moment to be seen.
    const how = await Promise.race([
      instance.death ?? Promise.resolve(null),
      new Promise<null>((resolve) => setTimeout(() => resolve(null), 2_000).unref()),
    ]);
    if (how === 'out_of_memory') return new FunctionHostError('out_of_memory', 'the instance went over its 512 MB memory limit');
    if (how === 'instance_crashed' || how === 'stopped')
      return new FunctionHostError('instance_crashed', 'the instance stopped during the request');
    return new FunctionHostError(
      'instance_crashed',
      `the instance connection failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  }

  function send(instance: Instance, forward: DoorForward, signal: AbortSignal, coldStart: boolean): Promise<DoorReply> {
    return new Promise<DoorReply>((resolve, reject) => {
      if (!instance.mux || instance.mux.socket.destroyed) instance.mux = openMux(instance.blank.sandbox.httpSocket);
      const mux = instance.mux;
      const id = mux.nextId;
      mux.nextId = mux.nextId >= 0xffff_ffff ? 1 : mux.nextId + 1;
      /** How much more of the request body the instance takes. */
      const window = new SendWindow();
      let reply: ReceivedBody | null = null;
      /** The reply's head and the body received with it, until it is handed over. */
      let early: { outcome: DoorReply['outcome']; status: number; headers: [string, string][]; chunks: Buffer[] } | null = null;
      let replyEnded = false;
      let over = false;
      let settled = false;
      // Shorthand methods, destructured: under tsx (keepNames) a named arrow costs a defineProperty per request.
      const { finish, settle, giveUp, deliver, onAbort } = {
        // The slot is held until the reply ends (or the stream is given up): a handler still running counts.
        finish() {
          if (over) return;
          over = true;
          mux.streams.delete(id);
          window.close();
          release(instance);
        },
        settle(fn: () => void) {
          if (!settled) {
            settled = true;
            signal.removeEventListener('abort', onAbort);
            fn();
          }
        },
        giveUp() {
          mux.write(FRAME.RESET, id);
          finish();
        },
        deliver() {
          const head = early!;
          early = null;
          // The door stopped waiting meanwhile: the reply is not wanted.
          if (settled) return replyEnded ? undefined : giveUp();
          // The connection broke right after the head: onClose's failure settles it.
          if (over && !replyEnded) return;
          let body: Readable | Buffer;
          if (replyEnded) body = head.chunks.length === 1 ? head.chunks[0]! : Buffer.concat(head.chunks);
          else {
            const received = receiveBody((bytes) => mux.write(FRAME.CREDIT, id, creditPayload(bytes)));
            reply = received;
            for (const chunk of head.chunks) received.push(chunk);
            // The door went away mid-body: the instance stops the body, the slot is free.
            received.stream.on('close', () => {
              if (!replyEnded && !over) giveUp();
            });
            body = received.stream;
          }
          settle(() =>
            resolve({
              outcome: head.outcome,
              status: head.status,
              headers: head.headers,
              body,
              coldStart,
              ...(coldStart ? { bootMs: instance.bootMs } : {}),
              instanceId: instance.id,
            }),
          );
        },
        // The door stops waiting; the handler runs on. Its reply, when it comes, is given up.
        onAbort() {
          settle(() => reject(abortError(signal)));
        },
      };
      mux.streams.set(id, {
        onFrame(type, payload) {
          if (type === FRAME.HEAD) {
            let head: { s: number; h: [string, string][]; o: string };
            try {
              head = JSON.parse(payload.toString());
            } catch {
              mux.socket.destroy(new Error('the instance sent a malformed reply head'));
              return;
            }
            if (head.o === 'not_loaded')
              return settle(() => reject(new FunctionHostError('instance_crashed', 'the instance has no bundle loaded')));
            // The door stopped waiting (its signal aborted): the reply is not wanted.
            if (settled) return giveUp();
            const outcome = head.o === 'handler_error' || head.o === 'invalid_response' ? head.o : 'response';
            const headers: [string, string][] = [];
            for (const [rawName, value] of head.h) {
              const name = rawName.toLowerCase();
              if (name === OUTCOME_HEADER || HOP_BY_HOP.has(name)) continue;
              headers.push([name, value]);
            }
            // The reply is handed over once the frames read with its head are taken: a small reply's body
            // and END come in the same read, and then it goes whole, with no stream to make and drain.
            early = { outcome, status: outcome === 'response' ? head.s : 500, headers, chunks: [] };
            queueMicrotask(deliver);
          } else if (type === FRAME.BODY) {
            if (reply) reply.push(payload);
            else early?.chunks.push(payload);
          } else if (type === FRAME.END) {
            replyEnded = true;
            reply?.end();
            finish();
          } else if (type === FRAME.CREDIT && payload.length === 4) {
            window.grant(payload.readUInt32BE(0));
          } else if (type === FRAME.RESET) {
            // After the reply's end: the rest of the request body is not wanted. Before: the runner cut the reply.
            window.close();
            if (replyEnded) return;
            const cut = new FunctionHostError('instance_crashed', "the function's reply stream failed");
            if (!settled) settle(() => reject(cut));
            else reply?.fail(cut);
            finish();
          }
        },
        onClose(error) {
          // The connection broke before the reply's end: the instance died (or was stopped).
          if (over) return;
          const current = reply;
          if (!settled) void failureOf(instance, error).then((failure) => settle(() => reject(failure)));
          else if (current && !replyEnded)
            void failureOf(instance, new Error('the reply was cut')).then((failure) => current.fail(failure));
          finish();
        },
      });
      signal.addEventListener('abort', onAbort, { once: true });
      const headers: [string, string][] = [];
      for (const [name, value] of forward.headers) {
        if (HOP_BY_HOP.has(name.toLowerCase())) continue;
        headers.push([name, value]);
      }
      mux.write(FRAME.HEAD, id, Buffer.from(JSON.stringify({ m: forward.method, q: forward.query, h: headers })));
      if (!forward.body) {
        mux.write(FRAME.END, id);
        return;
      }
      const source = forward.body;
      void (async () => {
        try {
          for await (const chunk of source) {
            if (!(await sendBody(mux.write, id, window, chunk as Buffer))) {
              source.destroy();
              return;
            }
          }
          if (!window.closed) mux.write(FRAME.END, id);
        } catch {
          if (!over) giveUp();
        }
      })();
    });
  }

  async function forwardHttp(fn: DeployedFunction, forward: DoorForward, signal: AbortSignal): Promise<DoorReply> {
    if (stopped) throw new FunctionHostError('start_failed', 'the functions host is stopped');
    if (signal.aborted) throw abortError(signal);
    const key = `${fn.function_id}/${fn.deployment_id}/${fn.bundle_sha256}`;
    const failed = failedStarts.get(key);
    if (failed && failed.until > Date.now()) throw failed.error;
    if (failed) failedStarts.delete(key);
    let pool = pools.get(key);
    if (!pool) {
      pool = { key, fn, instances: [], waiters: [] };
      pools.set(key, pool);
    }
    for (;;) {
      const { instance, coldStart } = await acquire(pool, signal);
      if (instance.state !== 'ready') {
        try {
          await untilAborted(instance.ready, signal);
        } catch (error) {
          release(instance);
          throw error;
        }
      }
      if (instance.state !== 'ready') {
        // It died between its start and this request: another slot.
        release(instance);
        continue;
      }
      return send(instance, forward, signal, coldStart);
    }
  }

  /** A pre-started blank process for one queued invocation, never an instance of the pools above. */
  async function runnerFor(fn: DeployedFunction): Promise<StartedRunner> {
    const blank = await takeBlank();
    blank.owner.fn = fn;
    return {
      sandbox: blank.sandbox,
      onConsole: (listener) => (blank.owner.console = listener),
      dispose: () => disposeBlank(blank),
    };
  }

  refill();

  return {
    forwardHttp,
    // Queued door: a sandboxed process of its own per invocation, started ahead of need (lib/functions/hosts/local/queued-run.ts).
    runQueued: (fn, request, budgetMs, signal) =>
      stopped
        ? Promise.resolve({ outcome: 'aborted', reply: null, console: [], runtimeMs: 0 })
        : runQueuedInSandbox({
            runner: () => runnerFor(fn),
            bundleFile: bundlePath(fn),
            fn,
            request,
            budgetMs,
            signal: AbortSignal.any([signal, stopping.signal]),
          }),
    fallbacks: caps.fallbacks,
    instanceCount: (fn) =>
      pools.get(`${fn.function_id}/${fn.deployment_id}/${fn.bundle_sha256}`)?.instances.filter((i) => i.state !== 'dead').length ?? 0,
    async stop() {
      stopped = true;
      stopping.abort();
      const pending = blanks.splice(0);
      for (const pool of pools.values()) {
        for (const waiter of pool.waiters.splice(0)) waiter.reject(new FunctionHostError('start_failed', 'the functions host is stopped'));
        for (const instance of pool.instances) instance.stopping = true;
      }
      await Promise.allSettled(pending.map(async (started) => disposeBlank(await started)));
      await Promise.allSettled([...live].map((blank) => disposeBlank(blank)));
      await Promise.allSettled([...pools.values()].flatMap((pool) => pool.instances.map((i) => i.death)));
      pools.clear();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
