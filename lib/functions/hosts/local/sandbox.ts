import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { makeInstanceCgroups, removeCgroup, watchMemory } from './instance-memory.ts';
import { bwrapArgs, INSIDE, NOBODY, type SandboxCapabilities } from './sandbox-probe.ts';
import { localConfig } from '../../../local-config.ts';

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
 * `probeSandbox` (sandbox-probe.ts) detects once what the machine allows and
 * says in sentences what it had to fall back from; the caps are instance-memory.ts.
 */

/** The egress bridge's port inside an instance's own network namespace. */
const EGRESS_PORT_IN_NAMESPACE = 3128;

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

/** An instance's folder on the host: its socket folder and its bundle folder. */
function makeInstanceFolder(caps: SandboxCapabilities, root: string, id: string) {
  const dir = mkdtempSync(join(root, `${id}-`));
  chmodSync(dir, 0o711);
  const sockets = join(dir, 'sock');
  const bundleDir = join(dir, 'fn');
  mkdirSync(sockets, { mode: 0o755 });
  mkdirSync(bundleDir, { mode: 0o755 });
  if (caps.dropToNobody) chownSync(sockets, NOBODY, NOBODY);
  return { dir, sockets, bundleDir };
}

/** The command that runs the runner in `serve` mode inside the isolation the machine allows. */
async function runnerCommand(
  caps: SandboxCapabilities,
  runnerDir: string,
  folder: { sockets: string; bundleDir: string },
): Promise<string[]> {
  const bwrap = caps.isolation === 'bwrap';
  const inside = {
    runnerDir: bwrap ? INSIDE.runnerDir : runnerDir,
    bundleDir: bwrap ? INSIDE.bundle : folder.bundleDir,
    sockets: bwrap ? INSIDE.sockets : folder.sockets,
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
  const drop = caps.dropToNobody ? ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups'] : [];
  if (bwrap) {
    const setenv = Object.entries(env).flatMap(([name, value]) => ['--setenv', name, value]);
    const binds = [
      '--ro-bind',
      runnerDir,
      INSIDE.runnerDir,
      '--ro-bind',
      folder.bundleDir,
      INSIDE.bundle,
      '--bind',
      folder.sockets,
      INSIDE.sockets,
    ];
    return [...drop, 'bwrap', ...bwrapArgs(caps.nodePath, binds), ...setenv, '--chdir', INSIDE.bundle, '--', ...nodeArgs];
  }
  const envArgs = Object.entries(env).map(([name, value]) => `${name}=${value}`);
  const command = [...drop, 'env', '-i', ...envArgs, ...nodeArgs];
  return caps.isolation === 'unshare' ? ['unshare', '--net', 'sh', '-c', 'ip link set lo up && exec "$@"', 'sh', ...command] : command;
}

/** The user's console: stdout and stderr as lines (a very long line is cut every 16 KiB). */
function forwardConsole(child: ChildProcess, onConsole: SpawnOptions['onConsole']): void {
  for (const stream of ['stdout', 'stderr'] as const) {
    let partial = '';
    child[stream]!.setEncoding('utf8');
    child[stream]!.on('data', (text: string) => {
      partial += text;
      const lines = partial.split('\n');
      partial = lines.pop()!;
      for (const line of lines) onConsole?.(stream, line);
      if (partial.length > 16_384) {
        onConsole?.(stream, partial);
        partial = '';
      }
    });
    child[stream]!.on('end', () => {
      if (partial) onConsole?.(stream, partial);
    });
  }
}

type ControlListener = (message: { type: string; message?: string }) => void;

/** The control channel (fd 3): JSON lines both ways. */
function openControl(child: ChildProcess): { control: Socket; listeners: ControlListener[] } {
  const control = child.stdio[3] as Socket;
  const listeners: ControlListener[] = [];
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
  return { control, listeners };
}

/** Spawns one blank runner instance (`serve` mode, no bundle yet). */
export async function spawnSandbox(caps: SandboxCapabilities, options: SpawnOptions): Promise<SandboxProcess> {
  const id = `i${process.pid}-${++sequence}`;
  const folder = makeInstanceFolder(caps, options.root, id);
  const egressSocket = join(folder.sockets, 'egress.sock');
  await options.prepareEgress?.(egressSocket);
  const command = await runnerCommand(caps, options.runnerDir, folder);
  const { cgroups, memoryCgroup } = await makeInstanceCgroups(caps, id, folder.dir);
  const joinCgroups = cgroups.map((path) => `echo $$ > '${path}/cgroup.procs'`).join(' && ');
  const script = `${joinCgroups ? `${joinCgroups} && ` : ''}exec "$@"`;
  const child = spawn('sh', ['-c', script, 'sh', ...command], {
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    env: { PATH: localConfig.childPath() },
    cwd: folder.dir,
  });
  forwardConsole(child, options.onConsole);
  const { control, listeners } = openControl(child);
  const memory = watchMemory(child, memoryCgroup);

  let cleaned: Promise<void> | null = null;
  const cleanup = () =>
    (cleaned ??= (async () => {
      memory.stop();
      memory.peakMemoryBytes();
      for (const path of cgroups) await removeCgroup(path);
      rmSync(folder.dir, { recursive: true, force: true });
    })());
  const exited = new Promise<InstanceExit>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal, outOfMemory: memory.outOfMemory() }));
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
    httpSocket: join(folder.sockets, 'http.sock'),
    egressSocket,
    bundleFile: join(folder.bundleDir, 'bundle.mjs'),
    bundleInside: `${caps.isolation === 'bwrap' ? INSIDE.bundle : folder.bundleDir}/bundle.mjs`,
    child,
    booted,
    exited,
    send: (message) => {
      if (!control.destroyed) control.write(`${JSON.stringify(message)}\n`);
    },
    onMessage: (listener) => listeners.push(listener),
    peakMemoryBytes: memory.peakMemoryBytes,
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
