import type { ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MEMORY_LIMIT_BYTES, PIDS_LIMIT, type SandboxCapabilities } from './capabilities.ts';

/** An instance's memory and process caps: its cgroups, else an RSS watchdog. */

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

/** The instance's cgroups, made before its process so that it joins them before node starts. */
export async function makeInstanceCgroups(
  caps: SandboxCapabilities,
  id: string,
  dir: string,
  limitBytes = MEMORY_LIMIT_BYTES,
): Promise<{ cgroups: string[]; memoryCgroup: string | null }> {
  const cgroups: string[] = [];
  let memoryCgroup: string | null = null;
  try {
    if (caps.memoryCgroup) {
      memoryCgroup = join(caps.memoryCgroup, `slipway-fn-${id}`);
      mkdirSync(memoryCgroup);
      cgroups.push(memoryCgroup);
      writeFileSync(join(memoryCgroup, 'memory.limit_in_bytes'), String(limitBytes));
      if (caps.memswAccounting) writeFileSync(join(memoryCgroup, 'memory.memsw.limit_in_bytes'), String(limitBytes));
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
  return { cgroups, memoryCgroup };
}

/** The memory an instance used and whether the cap killed it: the cgroup's figures, else a watchdog's. */
export interface MemoryWatch {
  /** The most memory used so far (kept from the last read, so a reader after the exit still gets it). */
  peakMemoryBytes(): number;
  /** After the exit: whether the cap killed it (the cgroup's oom_kill count, or the watchdog). */
  outOfMemory(): boolean;
  stop(): void;
}

export function watchMemory(child: ChildProcess, memoryCgroup: string | null, limitBytes = MEMORY_LIMIT_BYTES): MemoryWatch {
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
      let killed = watchdogKilled;
      peakMemoryBytes();
      if (memoryCgroup) {
        try {
          killed ||= /oom_kill\s+[1-9]/.test(readFileSync(join(memoryCgroup, 'memory.oom_control'), 'utf8'));
        } catch {
          // Removed meanwhile.
        }
      }
      return killed;
    },
    stop: () => clearInterval(watchdog),
  };
}
