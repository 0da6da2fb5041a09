import type { ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SandboxCapabilities } from './capabilities.ts';

/**
 * A sandboxed process's memory and process caps, the same for a function's runner, a build and an emulated
 * container: v1 cgroups made before the process, which joins them before its program starts (`inCgroups`), else
 * an RSS watchdog (`watchMemory`).
 */

/** What one sandboxed process and everything it starts may use. */
export interface SandboxLimits {
  memoryBytes: number;
  pids: number;
}

/** The cgroups of one sandboxed process: every path it joins, and the memory one (null without a memory cgroup). */
export interface ProcessCgroups {
  paths: string[];
  memory: string | null;
}

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

/** SIGKILL to every process in a cgroup (a build's package manager may have left the process group). */
export function killCgroupProcesses(path: string): void {
  for (const pid of readFileSync(join(path, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

/** Kills what is left in a cgroup and removes it, retrying while the kernel says EBUSY. */
export async function removeCgroup(path: string): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    try {
      killCgroupProcesses(path);
      rmdirSync(path);
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return;
      await sleep(attempt < 20 ? 5 : 20);
    }
  }
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

/**
 * The cgroups `name` under each controller the machine lets us write, capped at `limits`; made before the process so
 * that it joins them before its program starts. Throws when one cannot be made, leaving none behind.
 */
export function makeCgroups(caps: SandboxCapabilities, name: string, limits: SandboxLimits): ProcessCgroups {
  const made: ProcessCgroups = { paths: [], memory: null };
  try {
    if (caps.memoryCgroup) {
      made.memory = join(caps.memoryCgroup, name);
      mkdirSync(made.memory);
      made.paths.push(made.memory);
      writeFileSync(join(made.memory, 'memory.limit_in_bytes'), String(limits.memoryBytes));
      if (caps.memswAccounting) writeFileSync(join(made.memory, 'memory.memsw.limit_in_bytes'), String(limits.memoryBytes));
    }
    if (caps.pidsCgroup) {
      const pids = join(caps.pidsCgroup, name);
      mkdirSync(pids);
      made.paths.push(pids);
      writeFileSync(join(pids, 'pids.max'), String(limits.pids));
    }
  } catch (error) {
    // No process joined them yet: each is empty and goes at once.
    for (const path of made.paths) rmdirSync(path);
    throw error;
  }
  return made;
}

/** The command line that puts the shell in `cgroups`, then execs `argv` there (so its first instruction runs capped). */
export function inCgroups(cgroups: ProcessCgroups, argv: string[]): string[] {
  const joins = cgroups.paths.map((path) => `echo $$ > '${path}/cgroup.procs' && `).join('');
  return ['/bin/sh', '-c', `${joins}exec "$@"`, 'sh', ...argv];
}

/** Whether the kernel killed a process of this memory cgroup for going over its limit (its oom_kill count). */
export function oomKilled(memoryCgroup: string): boolean {
  try {
    return /oom_kill\s+[1-9]/.test(readFileSync(join(memoryCgroup, 'memory.oom_control'), 'utf8'));
  } catch {
    // Removed meanwhile.
    return false;
  }
}

/** The memory an instance used and whether the cap killed it: the cgroup's figures, else a watchdog's. */
export interface MemoryWatch {
  /** The most memory used so far (kept from the last read, so a reader after the exit still gets it). */
  peakMemoryBytes(): number;
  /** After the exit: whether the cap killed it (the cgroup's oom_kill count, or the watchdog). */
  outOfMemory(): boolean;
  stop(): void;
}

export function watchMemory(child: ChildProcess, memoryCgroup: string | null, limitBytes: number): MemoryWatch {
  let watchdogPeak = 0;
  let watchdogKilled = false;
  let watchdog: NodeJS.Timeout | undefined;
  if (!memoryCgroup && child.pid) {
    watchdog = setInterval(() => {
      const rss = treeRss(child.pid!);
      watchdogPeak = Math.max(watchdogPeak, rss);
      if (rss > limitBytes) {
        watchdogKilled = true;
        child.kill('SIGKILL');
      }
    }, 100);
    watchdog.unref();
  }
  let cgroupPeak = 0;
  const peakMemoryBytes = () => {
    if (!memoryCgroup) return watchdogPeak;
    cgroupPeak = Math.max(cgroupPeak, readNumber(join(memoryCgroup, 'memory.max_usage_in_bytes')));
    return cgroupPeak;
  };
  return {
    peakMemoryBytes,
    outOfMemory() {
      peakMemoryBytes();
      return watchdogKilled || (memoryCgroup !== null && oomKilled(memoryCgroup));
    },
    stop: () => clearInterval(watchdog),
  };
}
