import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FUNCTION_MEMORY_MB } from '../../model.ts';

/**
 * One sandboxed runner process on this machine (the local functions host).
 *
 * - Memory: a v1 memory cgroup, child of this process's own, capped at 512 MB
 *   (swap included where the kernel accounts it) and a pids cgroup; the
 *   process joins both before node starts. Without a writable cgroup, an RSS
 *   watchdog kills an instance over the cap.
 * - Files, processes, network: bubblewrap run as nobody (65534) with every
 *   namespace unshared (an empty network namespace with lo), read-only binds
 *   of node, /usr, /lib, the runner and the instance's bundle folder, and the
 *   socket folder; Node's --permission lets the runner read only itself and
 *   the bundle and refuses child processes, workers and native addons (Node
 *   22 does not check a unix socket's path against the grant, so listening
 *   on the socket folder needs no --allow-fs-write: none is given).
 * - Outbound: only through the platform's egress proxy socket in the socket
 *   folder, which the runner bridges to 127.0.0.1:3128 inside the namespace.
 *
 * `probeSandbox` detects once what the machine allows and says in sentences
 * what it had to fall back from.
 */

export const MEMORY_LIMIT_BYTES = FUNCTION_MEMORY_MB * 1024 * 1024;
/** Threads and processes per instance (an idle node has about 7 threads, bwrap adds two processes). */
const PIDS_LIMIT = 128;
/** The egress bridge's port inside an instance's own network namespace. */
const EGRESS_PORT_IN_NAMESPACE = 3128;
export const NOBODY = 65534;

const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));
/**
 * The runner's folder: in the repository, lib/functions/runner/; in the built CLI (dist/cli.mjs and its
 * chunks, where this module's URL is no longer under lib/), the copy bin/build-cli.mjs puts in dist/runner/.
 * The runner is runner.mjs and the modules beside it (protocol.mjs); task.mjs is the Fargate task's entry.
 */
export const RUNNER_DIR =
  [fileURLToPath(new URL('./runner/', import.meta.url)), fileURLToPath(new URL('../runner/', import.meta.url))].find(
    (path) => path.endsWith(join('dist', 'runner', '')) && existsSync(join(path, 'runner.mjs')),
  ) ?? join(repoRoot, 'lib/functions/runner');
export const RUNNER_PATH = join(RUNNER_DIR, 'runner.mjs');
/** The runner's files every sandbox gets (read-only), beside one another. */
export const RUNNER_FILES = ['runner.mjs', 'protocol.mjs'] as const;

/** The real node binary: node_modules/node/bin/node (node@22) when present, else this process's. */
export function nodeBinary(): string {
  const pinned = join(repoRoot, 'node_modules/node/bin/node');
  try {
    return realpathSync(pinned);
  } catch {
    return realpathSync(process.execPath);
  }
}

export interface SandboxCapabilities {
  /** Parent folders under which each instance gets its cgroup, or null. */
  memoryCgroup: string | null;
  memswAccounting: boolean;
  pidsCgroup: string | null;
  /** How the process is isolated: bwrap (full), unshare (network namespace only), or none. */
  isolation: 'bwrap' | 'unshare' | 'none';
  /** Whether the runner drops to nobody (65534). */
  dropToNobody: boolean;
  nodePath: string;
  /** What the machine forced, one human sentence each (the platform prints them at start). */
  fallbacks: string[];
}

function ownCgroup(controller: string): string | null {
  try {
    for (const line of readFileSync('/proc/self/cgroup', 'utf8').split('\n')) {
      const [, controllers, path] = line.split(':');
      if (controllers !== undefined && path !== undefined && controllers.split(',').includes(controller)) {
        const base = join('/sys/fs/cgroup', controller, path);
        return existsSync(base) ? base : null;
      }
    }
  } catch {
    // No /proc/self/cgroup: no cgroups.
  }
  return null;
}

/** Whether a child cgroup can be made and limited under `parent`. */
function tryCgroup(parent: string, file: string, value: string): boolean {
  const probe = join(parent, `slipway-probe-${process.pid}-${Date.now()}`);
  try {
    mkdirSync(probe);
    writeFileSync(join(probe, file), value);
    return true;
  } catch {
    return false;
  } finally {
    try {
      rmdirSync(probe);
    } catch {
      // Never made.
    }
  }
}

function runs(command: string, args: string[]): { ok: boolean; why: string } {
  const result = spawnSync(command, args, { encoding: 'utf8', timeout: 10_000, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
  if (result.error) return { ok: false, why: (result.error as NodeJS.ErrnoException).code ?? result.error.message };
  if (result.status !== 0) return { ok: false, why: (result.stderr || `exit ${result.status}`).trim().split('\n')[0]! };
  return { ok: true, why: '' };
}

/** Removes empty instance cgroups left by a platform process that died without stopping (their processes died with it). */
function sweepStaleCgroups(parent: string): void {
  try {
    for (const name of readdirSync(parent)) {
      const owner = /^slipway-fn-i(\d+)-/.exec(name);
      if (!owner) continue;
      try {
        process.kill(Number(owner[1]), 0);
        continue; // Its platform is alive.
      } catch {
        // Gone: its cgroup is stale.
      }
      try {
        rmdirSync(join(parent, name));
      } catch {
        // Still busy or not ours to remove: left alone.
      }
    }
  } catch {
    // Unreadable parent: nothing to sweep.
  }
}

/** Detects what this machine allows, once, synchronously (about 100 ms). */
export function probeSandbox(): SandboxCapabilities {
  const fallbacks: string[] = [];
  const nodePath = nodeBinary();
  const isRoot = process.getuid?.() === 0;

  let memoryCgroup = ownCgroup('memory');
  if (memoryCgroup) sweepStaleCgroups(memoryCgroup);
  if (memoryCgroup && !tryCgroup(memoryCgroup, 'memory.limit_in_bytes', String(MEMORY_LIMIT_BYTES))) memoryCgroup = null;
  let memswAccounting = false;
  if (memoryCgroup) {
    memswAccounting = existsSync(join(memoryCgroup, 'memory.memsw.limit_in_bytes'));
    if (!memswAccounting)
      fallbacks.push(
        'Function memory: the kernel does not account swap (no memory.memsw.limit_in_bytes), so the 512 MB cap counts RAM only.',
      );
  } else {
    fallbacks.push(
      'Function memory: no writable v1 memory cgroup, so an RSS watchdog (checked every 100 ms) stops an instance over 512 MB; a very fast allocation can overshoot before it is seen.',
    );
  }
  let pidsCgroup = ownCgroup('pids');
  if (pidsCgroup) sweepStaleCgroups(pidsCgroup);
  if (pidsCgroup && !tryCgroup(pidsCgroup, 'pids.max', String(PIDS_LIMIT))) pidsCgroup = null;
  if (!pidsCgroup)
    fallbacks.push(
      'Function processes: no writable pids cgroup, so threads and processes per instance are not capped (Node --permission still refuses child processes).',
    );

  const dropToNobody = isRoot && runs('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', 'true']).ok;
  if (!dropToNobody)
    fallbacks.push(
      `Function user: cannot switch to nobody (${isRoot ? 'setpriv failed' : 'the platform is not running as root'}), so instances run as the platform's own user.`,
    );

  let isolation: SandboxCapabilities['isolation'] = 'none';
  const bwrapProbe = runs(dropToNobody ? 'setpriv' : 'bwrap', [
    ...(dropToNobody ? [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', 'bwrap'] : []),
    ...bwrapArgs(nodePath, []),
    '--',
    '/opt/node/node',
    '--permission',
    '-e',
    '0',
  ]);
  if (bwrapProbe.ok) isolation = 'bwrap';
  else {
    const unshareProbe = isRoot ? runs('unshare', ['--net', 'sh', '-c', 'ip link set lo up']) : { ok: false, why: 'not root' };
    if (unshareProbe.ok) {
      isolation = 'unshare';
      fallbacks.push(
        `Function isolation: bubblewrap unavailable (${bwrapProbe.why}); instances get their own network namespace (unshare) but see the machine's file system, limited to the runner and their bundle by Node's --permission.`,
      );
    } else {
      fallbacks.push(
        `Function isolation: neither bubblewrap (${bwrapProbe.why}) nor a network namespace (${unshareProbe.why}) is available; instances see the machine's file system (limited by Node's --permission) and its network: only fetch, https.get and https agents go through the egress proxy, raw net/tls sockets are not blocked.`,
      );
    }
  }
  return { memoryCgroup, memswAccounting, pidsCgroup, isolation, dropToNobody, nodePath, fallbacks };
}

/** Paths inside a bwrap sandbox. */
const INSIDE = { node: '/opt/node', runnerDir: '/opt/runner', bundle: '/fn', sockets: '/run/slipway' };

export function bwrapArgs(nodePath: string, binds: string[]): string[] {
  return [
    '--unshare-all',
    '--die-with-parent',
    '--new-session',
    '--clearenv',
    '--ro-bind',
    '/usr',
    '/usr',
    '--ro-bind-try',
    '/lib',
    '/lib',
    '--ro-bind-try',
    '/lib64',
    '/lib64',
    '--ro-bind',
    dirname(nodePath),
    INSIDE.node,
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    ...binds,
  ];
}

export interface InstanceExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The memory cap killed it (cgroup oom_kill, or the RSS watchdog). */
  outOfMemory: boolean;
}

export interface SandboxProcess {
  id: string;
  /** The runner's HTTP socket, as the host reaches it. */
  httpSocket: string;
  /** The egress proxy socket the runner bridges to (the host's proxy listens there). */
  egressSocket: string;
  /** Where the instance's bundle goes on the host; `bundleInside` is the same file as the runner sees it. */
  bundleFile: string;
  bundleInside: string;
  child: ChildProcess;
  /** Resolves once the runner says it has booted; rejects if it dies first. */
  booted: Promise<void>;
  exited: Promise<InstanceExit>;
  send(message: object): void;
  onMessage(listener: (message: { type: string; message?: string }) => void): void;
  /** The most memory the instance used (cgroup max_usage_in_bytes, or the watchdog's peak). */
  peakMemoryBytes(): number;
  /** Kills the instance and removes its cgroups and folder. */
  stop(): Promise<void>;
}

export interface SpawnOptions {
  /** The host's temp folder; the instance gets a folder in it. */
  root: string;
  /** The folder of the runner's files to run (copies the sandboxed user reads and cannot change). */
  runnerDir: string;
  onConsole?: (stream: 'stdout' | 'stderr', line: string) => void;
  /** Called before the runner starts, with the egress socket path to listen on. */
  prepareEgress?: (socketPath: string) => Promise<void>;
}

let sequence = 0;

function sleep(ms: number) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function readNumber(file: string): number {
  try {
    return Number(readFileSync(file, 'utf8').trim()) || 0;
  } catch {
    return 0;
  }
}

/** Kills what is left in a cgroup and removes it, retrying while the kernel says EBUSY. */
export async function removeCgroup(path: string): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    try {
      for (const pid of readFileSync(join(path, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
      rmdirSync(path);
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return;
      await sleep(attempt < 20 ? 5 : 20);
    }
  }
}

/** A free TCP port on this machine (the egress bridge when instances share the machine's network). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Resident memory of a process and its descendants (the RSS watchdog). */
function treeRss(pid: number): number {
  let total = 0;
  const stack = [pid];
  const seen = new Set<number>();
  while (stack.length > 0) {
    const current = stack.pop()!;
    if (seen.has(current)) continue;
    seen.add(current);
    try {
      const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${current}/status`, 'utf8'));
      if (match) total += Number(match[1]) * 1024;
      for (const task of readdirSync(`/proc/${current}/task`)) {
        for (const child of readFileSync(`/proc/${current}/task/${task}/children`, 'utf8').split(' ').filter(Boolean))
          stack.push(Number(child));
      }
    } catch {
      // Gone meanwhile.
    }
  }
  return total;
}

/** Spawns one blank runner instance (`serve` mode, no bundle yet). */
export async function spawnSandbox(caps: SandboxCapabilities, options: SpawnOptions): Promise<SandboxProcess> {
  const id = `i${process.pid}-${++sequence}`;
  const dir = mkdtempSync(join(options.root, `${id}-`));
  chmodSync(dir, 0o711);
  const sockets = join(dir, 'sock');
  const bundleDir = join(dir, 'fn');
  mkdirSync(sockets, { mode: 0o755 });
  mkdirSync(bundleDir, { mode: 0o755 });
  if (caps.dropToNobody) chownSync(sockets, NOBODY, NOBODY);
  const httpSocket = join(sockets, 'http.sock');
  const egressSocket = join(sockets, 'egress.sock');
  const bundleFile = join(bundleDir, 'bundle.mjs');
  await options.prepareEgress?.(egressSocket);

  const bwrap = caps.isolation === 'bwrap';
  const inside = {
    runnerDir: bwrap ? INSIDE.runnerDir : options.runnerDir,
    bundleDir: bwrap ? INSIDE.bundle : bundleDir,
    sockets: bwrap ? INSIDE.sockets : sockets,
    node: bwrap ? `${INSIDE.node}/node` : caps.nodePath,
  };
  const ownNamespace = caps.isolation !== 'none';
  const egressPort = ownNamespace ? EGRESS_PORT_IN_NAMESPACE : await freePort();
  const env: Record<string, string> = {
    HOME: '/tmp',
    NODE_USE_ENV_PROXY: '1',
    HTTPS_PROXY: `http://127.0.0.1:${egressPort}`,
    HTTP_PROXY: `http://127.0.0.1:${egressPort}`,
    SLIPWAY_EGRESS_SOCKET: `${inside.sockets}/egress.sock`,
    SLIPWAY_EGRESS_PORT: String(egressPort),
  };
  const nodeArgs = [
    inside.node,
    // Node's own note that the env proxy is experimental is not the user's console.
    '--disable-warning=UNDICI-EHPA',
    '--permission',
    `--allow-fs-read=${inside.runnerDir}/`,
    `--allow-fs-read=${inside.bundleDir}/`,
    `${inside.runnerDir}/runner.mjs`,
    'serve',
    '--socket',
    `${inside.sockets}/http.sock`,
  ];

  // The cgroups, made before the process so it joins them before node starts.
  const cgroups: string[] = [];
  let memoryCgroup: string | null = null;
  try {
    if (caps.memoryCgroup) {
      memoryCgroup = join(caps.memoryCgroup, `slipway-fn-${id}`);
      mkdirSync(memoryCgroup);
      cgroups.push(memoryCgroup);
      writeFileSync(join(memoryCgroup, 'memory.limit_in_bytes'), String(MEMORY_LIMIT_BYTES));
      if (caps.memswAccounting) writeFileSync(join(memoryCgroup, 'memory.memsw.limit_in_bytes'), String(MEMORY_LIMIT_BYTES));
    }
    if (caps.pidsCgroup) {
      const pids = join(caps.pidsCgroup, `slipway-fn-${id}`);
      mkdirSync(pids);
      cgroups.push(pids);
      writeFileSync(join(pids, 'pids.max'), String(PIDS_LIMIT));
    }
  } catch (error) {
    for (const path of cgroups) await removeCgroup(path);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }

  let command: string[];
  const drop = caps.dropToNobody ? ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups'] : [];
  if (bwrap) {
    const setenv = Object.entries(env).flatMap(([name, value]) => ['--setenv', name, value]);
    const binds = [
      '--ro-bind',
      options.runnerDir,
      INSIDE.runnerDir,
      '--ro-bind',
      bundleDir,
      INSIDE.bundle,
      '--bind',
      sockets,
      INSIDE.sockets,
    ];
    command = [...drop, 'bwrap', ...bwrapArgs(caps.nodePath, binds), ...setenv, '--chdir', INSIDE.bundle, '--', ...nodeArgs];
  } else {
    const envArgs = Object.entries(env).map(([name, value]) => `${name}=${value}`);
    command = [...drop, 'env', '-i', ...envArgs, ...nodeArgs];
    if (caps.isolation === 'unshare') command = ['unshare', '--net', 'sh', '-c', 'ip link set lo up && exec "$@"', 'sh', ...command];
  }
  const join_ = cgroups.map((path) => `echo $$ > '${path}/cgroup.procs'`).join(' && ');
  const script = `${join_ ? `${join_} && ` : ''}exec "$@"`;
  const child = spawn('sh', ['-c', script, 'sh', ...command], {
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    cwd: dir,
  });

  // Console lines.
  for (const stream of ['stdout', 'stderr'] as const) {
    let partial = '';
    child[stream]!.setEncoding('utf8');
    child[stream]!.on('data', (text: string) => {
      partial += text;
      const lines = partial.split('\n');
      partial = lines.pop()!;
      for (const line of lines) options.onConsole?.(stream, line);
      if (partial.length > 16_384) {
        options.onConsole?.(stream, partial);
        partial = '';
      }
    });
    child[stream]!.on('end', () => {
      if (partial) options.onConsole?.(stream, partial);
    });
  }

  // The control channel (fd 3): JSON lines.
  const control = child.stdio[3] as Socket;
  const listeners: ((message: { type: string; message?: string }) => void)[] = [];
  let buffered = '';
  control.setEncoding('utf8');
  control.on('data', (text: string) => {
    buffered += text;
    let newline;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      try {
        const message = JSON.parse(line);
        for (const listener of listeners) listener(message);
      } catch {
        // Not a control line.
      }
    }
  });
  control.on('error', () => {});

  // Memory: the cgroup, else the watchdog.
  let watchdogPeak = 0;
  let watchdogKilled = false;
  let watchdog: NodeJS.Timeout | undefined;
  if (!memoryCgroup && child.pid) {
    watchdog = setInterval(() => {
      const rss = treeRss(child.pid!);
      watchdogPeak = Math.max(watchdogPeak, rss);
      if (rss > MEMORY_LIMIT_BYTES) {
        watchdogKilled = true;
        child.kill('SIGKILL');
      }
    }, 100);
    watchdog.unref();
  }
  // The cgroup goes with the instance: its peak is kept from the last read, so a reader after the exit still gets it.
  let cgroupPeak = 0;
  const peakMemoryBytes = () => {
    if (!memoryCgroup) return watchdogPeak;
    cgroupPeak = Math.max(cgroupPeak, readNumber(join(memoryCgroup, 'memory.max_usage_in_bytes')));
    return cgroupPeak;
  };

  let cleaned: Promise<void> | null = null;
  const cleanup = () =>
    (cleaned ??= (async () => {
      if (watchdog) clearInterval(watchdog);
      peakMemoryBytes();
      for (const path of cgroups) await removeCgroup(path);
      rmSync(dir, { recursive: true, force: true });
    })());

  const exited = new Promise<InstanceExit>((resolve) => {
    child.once('exit', (code, signal) => {
      let outOfMemory = watchdogKilled;
      peakMemoryBytes();
      if (memoryCgroup) {
        try {
          outOfMemory ||= /oom_kill\s+[1-9]/.test(readFileSync(join(memoryCgroup, 'memory.oom_control'), 'utf8'));
        } catch {
          // Removed meanwhile.
        }
      }
      resolve({ code, signal, outOfMemory });
    });
  });
  child.once('error', () => child.emit('exit', null, null));

  const booted = new Promise<void>((resolve, reject) => {
    listeners.push((message) => {
      if (message.type === 'booted') resolve();
    });
    void exited.then((exit) => reject(new Error(`the runner exited before it booted (code ${exit.code}, signal ${exit.signal})`)));
  });
  booted.catch(() => {});

  return {
    id,
    httpSocket,
    egressSocket,
    bundleFile,
    bundleInside: `${inside.bundleDir}/bundle.mjs`,
    child,
    booted,
    exited,
    send: (message) => {
      if (!control.destroyed) control.write(`${JSON.stringify(message)}\n`);
    },
    onMessage: (listener) => listeners.push(listener),
    peakMemoryBytes,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
      control.destroy();
      await cleanup();
    },
  };
}

/** Makes the host's temp folder, with a copy of the runner's files that nobody can write. */
export function makeSandboxRoot(): { root: string; runnerDir: string } {
  const root = mkdtempSync(join(tmpdir(), 'slipway-functions-'));
  // The sandboxed user must traverse it (mkdtemp makes it 0700).
  chmodSync(root, 0o711);
  const runnerDir = join(root, 'runner');
  mkdirSync(runnerDir, { mode: 0o755 });
  chmodSync(runnerDir, 0o755);
  for (const file of RUNNER_FILES) {
    copyFileSync(join(RUNNER_DIR, file), join(runnerDir, file));
    chmodSync(join(runnerDir, file), 0o644);
  }
  return { root, runnerDir };
}
