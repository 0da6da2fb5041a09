import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeCgroup } from '../../functions/hosts/local/instance-memory.ts';
import { bwrapArgs, NOBODY, type SandboxCapabilities } from '../../functions/hosts/local/sandbox-probe.ts';
import { localConfig } from '../local-config.ts';

/**
 * One build in the functions sandbox's isolation (lib/functions/hosts/local/sandbox.ts), shaped for a build:
 * bubblewrap as nobody with every namespace unshared (an empty network namespace whose only way out
 * is the platform's egress proxy socket, which the build script bridges to 127.0.0.1:3128), read-only
 * /usr and node, the workspace and the project's package store the only writable places, a memory
 * cgroup of BUILD_MEMORY_MB and a pids cgroup. Unlike a function, a build runs child processes (the
 * package manager, the build command), so node's --permission is not used: bubblewrap is the wall.
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

export interface BuildSpawn {
  caps: SandboxCapabilities;
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

function command(spec: BuildSpawn): string[] {
  const drop = spec.caps.dropToNobody ? ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups'] : [];
  if (spec.caps.isolation !== 'bwrap') {
    // The fallback the platform's start line states: the machine's file system, no own network namespace.
    return [
      ...drop,
      'env',
      '-i',
      `PATH=${localConfig.childPath()}`,
      spec.caps.nodePath,
      spec.scriptPath,
      'build',
      join(spec.workspace, 'job.json'),
    ];
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
    spec.scriptPath,
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
  return [
    ...drop,
    'bwrap',
    ...bwrapArgs(spec.caps.nodePath, binds),
    ...env,
    '--chdir',
    INSIDE.workspace,
    '--',
    `${INSIDE.node}/node`,
    INSIDE.script,
    'build',
    `${INSIDE.workspace}/job.json`,
  ];
}

/** Starts the build script's `build` phase in the sandbox; its output lines go to `onLine`. */
export function spawnBuild(spec: BuildSpawn): BuildProcess {
  const cgroups = makeCgroups(spec.caps, spec.id, spec.memoryMb);
  const joinCgroups = cgroups.map((path) => `echo $$ > '${path}/cgroup.procs'`).join(' && ');
  const child = spawn('sh', ['-c', `${joinCgroups ? `${joinCgroups} && ` : ''}exec "$@"`, 'sh', ...command(spec)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: localConfig.childPath() },
    detached: true,
  });
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
