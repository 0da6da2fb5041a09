import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  accessSync,
  constants,
  copyFileSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { Writable } from 'node:stream';
import { removeCgroup } from '../../functions/hosts/local/instance-memory.ts';
import { bwrapArgs, NOBODY, type SandboxCapabilities } from '../../functions/hosts/local/sandbox-probe.ts';
import { localConfig } from '../../local-config.ts';

/**
 * One build in the functions sandbox's isolation (lib/functions/hosts/local/sandbox.ts), shaped for a build:
 * bubblewrap as nobody with every namespace unshared (an empty network namespace whose only way out
 * is the platform's egress proxy socket, which the build script bridges to 127.0.0.1:3128), read-only
 * /usr and node, the workspace and the project's package store the only writable places, a memory
 * cgroup of BUILD_MEMORY_MB and a pids cgroup. Unlike a function, a build runs child processes (the
 * package manager, the build command), so node's --permission is not used: bubblewrap is the wall.
 *
 * What a build can learn of the machine from /proc (issue 39): it has its own PID namespace
 * (`--unshare-all` includes `--unshare-pid`) and a /proc of its own (`--proc /proc`), so it sees its
 * own processes only, and PID 1 is bubblewrap's reaper. That process shows its command line and its
 * environment, so bubblewrap reads its options from a pipe (`--args 3`: /proc/1/cmdline names only the
 * build script's command) and is started with an empty environment from `/` (/proc/1/environ holds
 * `PWD=/` at most). /proc/self/mountinfo names each bind's source folder, so nothing is bound from the
 * checkout: Node and the build script are staged under the OS temp folder (`stageRuntime`), and the
 * package store's folder is named by a hash, not by the project id.
 */
export const INSIDE = {
  node: '/opt/node',
  script: '/opt/slipway/build.mjs',
  workspace: '/build',
  cache: '/cache',
  sockets: '/run/slipway',
};
/** The egress bridge's port inside the build's network namespace. */
export const EGRESS_PORT = 3128;
/** Processes and threads of one build (a package manager forks a good deal). */
const PIDS_LIMIT = 2048;

export interface BuildProcess {
  child: ChildProcess;
  exited: Promise<{ code: number | null; outOfMemory: boolean }>;
  kill(): void;
}

/** The sandbox's Node and build script, staged where their path says nothing of the checkout. */
export interface StagedRuntime {
  /** The staged node binary (its folder is bound on /opt/node). */
  nodePath: string;
  /** The staged build script (bound on /opt/slipway/build.mjs). */
  scriptPath: string;
}

/** Whether a folder is this process's own and writable by no one else (the temp folder is everyone's). */
function ownFolder(path: string): boolean {
  try {
    const stat = lstatSync(path);
    return stat.isDirectory() && stat.uid === process.getuid?.() && (stat.mode & 0o022) === 0;
  } catch {
    return false;
  }
}

/**
 * Copies Node (a hard link when the file system allows it) and the build script out of the checkout:
 * Node into a folder of the OS temp folder named by a hash of the binary's path, size and time (made once
 * per Node on this machine and shared by every platform run, when that folder is this user's own and
 * writable by no one else; else into `dir`), the build script into `dir` (the host's private folder).
 */
export function stageRuntime(nodePath: string, scriptPath: string, dir: string): StagedRuntime {
  const stat = statSync(nodePath);
  const tag = createHash('sha256').update(`${nodePath}\0${stat.size}\0${stat.mtimeMs}`).digest('hex').slice(0, 16);
  let nodeDir = join(tmpdir(), `slipway-sandbox-node-${tag}`);
  mkdirSync(nodeDir, { recursive: true, mode: 0o755 });
  if (!ownFolder(nodeDir)) {
    nodeDir = join(dir, 'node');
    mkdirSync(nodeDir, { recursive: true, mode: 0o755 });
  }
  const staged = join(nodeDir, 'node');
  const current = lstatSync(staged, { throwIfNoEntry: false });
  if (!current?.isFile() || current.size !== stat.size) {
    const partial = join(nodeDir, `node.${process.pid}.${Date.now()}`);
    try {
      linkSync(nodePath, partial);
    } catch {
      copyFileSync(nodePath, partial, constants.COPYFILE_FICLONE);
    }
    // Another platform may stage the same binary at once: the rename is atomic either way.
    renameSync(partial, staged);
  }
  const script = join(dir, 'build.mjs');
  rmSync(script, { force: true });
  copyFileSync(scriptPath, script);
  return { nodePath: staged, scriptPath: script };
}

/** A program's absolute path, looked up in the platform's PATH (bubblewrap starts with no environment). */
function programPath(name: string): string {
  for (const dir of localConfig.childPath().split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // Not in this folder.
    }
  }
  return name;
}

export interface BuildSpawn {
  caps: SandboxCapabilities;
  /** Node and the build script as the sandbox binds them (stageRuntime). */
  runtime: StagedRuntime;
  id: string;
  scriptPath: string;
  workspace: string;
  cacheDir: string;
  socketsDir: string;
  memoryMb: number;
  onLine: (line: string) => void;
}

function makeCgroups(caps: SandboxCapabilities, id: string, memoryMb: number): string[] {
  const made: string[] = [];
  if (caps.memoryCgroup) {
    const path = join(caps.memoryCgroup, `slipway-build-${id}`);
    mkdirSync(path);
    made.push(path);
    const bytes = String(memoryMb * 1024 * 1024);
    writeFileSync(join(path, 'memory.limit_in_bytes'), bytes);
    if (caps.memswAccounting) writeFileSync(join(path, 'memory.memsw.limit_in_bytes'), bytes);
  }
  if (caps.pidsCgroup) {
    const path = join(caps.pidsCgroup, `slipway-build-${id}`);
    mkdirSync(path);
    made.push(path);
    writeFileSync(join(path, 'pids.max'), String(PIDS_LIMIT));
  }
  return made;
}

/** The command line, and (bubblewrap) the options it reads from its fd 3. */
function command(spec: BuildSpawn): { argv: string[]; bwrapOptions: string[] | null } {
  const drop = spec.caps.dropToNobody ? [programPath('setpriv'), `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups'] : [];
  if (spec.caps.isolation !== 'bwrap') {
    // The fallback the platform's start line states: the machine's file system, no own network namespace.
    const argv = [
      ...drop,
      programPath('env'),
      '-i',
      `PATH=${localConfig.childPath()}`,
      spec.caps.nodePath,
      spec.scriptPath,
      'build',
      join(spec.workspace, 'job.json'),
    ];
    return { argv, bwrapOptions: null };
  }
  const binds = [
    '--ro-bind-try',
    '/bin',
    '/bin',
    '--ro-bind-try',
    '/etc/ssl',
    '/etc/ssl',
    '--ro-bind-try',
    '/etc/ca-certificates',
    '/etc/ca-certificates',
    '--ro-bind-try',
    '/etc/passwd',
    '/etc/passwd',
    '--ro-bind-try',
    '/etc/group',
    '/etc/group',
    '--tmpfs',
    '/tmp',
    '--ro-bind',
    spec.runtime.scriptPath,
    INSIDE.script,
    '--bind',
    spec.workspace,
    INSIDE.workspace,
    '--bind',
    spec.cacheDir,
    INSIDE.cache,
    '--bind',
    spec.socketsDir,
    INSIDE.sockets,
  ];
  const env = ['--setenv', 'PATH', `${INSIDE.node}:/usr/local/bin:/usr/bin:/bin`, '--setenv', 'HOME', `${INSIDE.workspace}/home`];
  // Every option that names a folder of the machine goes through fd 3, so PID 1's command line shows none.
  const bwrapOptions = [...bwrapArgs(spec.runtime.nodePath, binds), ...env, '--chdir', INSIDE.workspace];
  const argv = [
    ...drop,
    programPath('bwrap'),
    '--args',
    '3',
    '--',
    `${INSIDE.node}/node`,
    INSIDE.script,
    'build',
    `${INSIDE.workspace}/job.json`,
  ];
  return { argv, bwrapOptions };
}

/** Starts the build script's `build` phase in the sandbox; its output lines go to `onLine`. */
export function spawnBuild(spec: BuildSpawn): BuildProcess {
  const cgroups = makeCgroups(spec.caps, spec.id, spec.memoryMb);
  const joinCgroups = cgroups.map((path) => `echo $$ > '${path}/cgroup.procs'`).join(' && ');
  const { argv, bwrapOptions } = command(spec);
  const child = spawn('/bin/sh', ['-c', `${joinCgroups ? `${joinCgroups} && ` : ''}exec "$@"`, 'sh', ...argv], {
    stdio: ['ignore', 'pipe', 'pipe', bwrapOptions ? 'pipe' : 'ignore'],
    // Bubblewrap becomes the sandbox's PID 1, whose environment and folder any build process can read: none, and /.
    env: bwrapOptions ? {} : { PATH: localConfig.childPath() },
    cwd: '/',
    detached: true,
  });
  if (bwrapOptions) {
    const options = child.stdio[3] as Writable;
    options.on('error', () => undefined);
    options.end(bwrapOptions.map((option) => `${option}\0`).join(''));
  }
  for (const stream of [child.stdout!, child.stderr!]) {
    let partial = '';
    stream.setEncoding('utf8');
    stream.on('data', (text: string) => {
      partial += text;
      const lines = partial.split(/\r?\n/);
      partial = lines.pop()!;
      for (const line of lines) spec.onLine(line);
    });
    stream.on('end', () => partial && spec.onLine(partial));
  }
  const exited = new Promise<{ code: number | null; outOfMemory: boolean }>((resolve) => {
    child.once('close', async (code) => {
      let outOfMemory = false;
      if (cgroups[0] && spec.caps.memoryCgroup && cgroups[0].startsWith(spec.caps.memoryCgroup)) {
        try {
          outOfMemory = /oom_kill\s+[1-9]/.test(readFileSync(join(cgroups[0], 'memory.oom_control'), 'utf8'));
        } catch {
          // Gone already.
        }
      }
      for (const path of cgroups) await removeCgroup(path);
      resolve({ code, outOfMemory });
    });
  });
  return {
    child,
    exited,
    kill: () => {
      try {
        // The whole process group: the package manager's and the build command's children too.
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
      for (const path of cgroups) {
        try {
          for (const pid of readFileSync(join(path, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean))
            process.kill(Number(pid), 'SIGKILL');
        } catch {
          // Empty or gone.
        }
      }
    },
  };
}
