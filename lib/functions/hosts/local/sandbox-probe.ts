import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FUNCTION_MEMORY_MB } from '../../model.ts';
import { localConfig } from '../../../local-config.ts';

/**
 * What this machine allows a sandboxed runner (sandbox.ts): cgroups, bubblewrap, a network namespace, a switch
 * to nobody. `probeSandbox` detects it once and says in sentences what it had to fall back from.
 */

export const MEMORY_LIMIT_BYTES = FUNCTION_MEMORY_MB * 1024 * 1024;
/** Threads and processes per instance (an idle node has about 7 threads, bwrap adds two processes). */
export const PIDS_LIMIT = 128;
export const NOBODY = 65534;

const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));

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
  const result = spawnSync(command, args, { encoding: 'utf8', timeout: 10_000, env: { PATH: localConfig.childPath() } });
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
export const INSIDE = { node: '/opt/node', runnerDir: '/opt/runner', bundle: '/fn', sockets: '/run/slipway' };

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
