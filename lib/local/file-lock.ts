import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * A lock between the processes of one machine on a folder's work (the shared
 * Lambda build, a synthesis into cdk.out), so that a test file and `cdk synth`
 * running at once do the work once instead of twice on the same output. The
 * lock is a directory, made atomically, holding its owner's pid; the lock of
 * an owner that died is taken over.
 */
const pollMs = 200;

function tryAcquire(lockDir: string): boolean {
  try {
    fs.mkdirSync(lockDir);
    fs.writeFileSync(path.join(lockDir, 'pid'), String(process.pid));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  if (ownerIsGone(lockDir)) {
    fs.rmSync(lockDir, { recursive: true, force: true });
    return tryAcquire(lockDir);
  }
  return false;
}

function ownerIsGone(lockDir: string): boolean {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(path.join(lockDir, 'pid'), 'utf8'));
  } catch {
    // Between the owner's mkdir and its pid file; a lock left that way for a minute is a dead owner's.
    const made = fs.statSync(lockDir, { throwIfNoEntry: false });
    return !made || Date.now() - made.mtimeMs > 60_000;
  }
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

function release(lockDir: string): void {
  fs.rmSync(lockDir, { recursive: true, force: true });
}

/** Runs `work` holding the lock, blocking the thread while another process holds it (for synchronous callers: CDK bundling). */
export function withFileLockSync<T>(lockDir: string, work: () => T): T {
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  while (!tryAcquire(lockDir)) Atomics.wait(sleeper, 0, 0, pollMs);
  try {
    return work();
  } finally {
    release(lockDir);
  }
}

/** Runs `work` holding the lock, waiting without blocking while another process holds it. */
export async function withFileLock<T>(lockDir: string, work: () => Promise<T>): Promise<T> {
  while (!tryAcquire(lockDir)) await new Promise((resolve) => setTimeout(resolve, pollMs));
  try {
    return await work();
  } finally {
    release(lockDir);
  }
}
