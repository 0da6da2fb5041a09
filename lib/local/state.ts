import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { localConfig } from '../local-config.ts';

/**
 * What a running local platform tells the operator CLI: its API address and
 * the environment naming its resources. Written by `npm run dev`, removed on stop.
 */
export interface LocalPlatformState {
  pid: number;
  baseUrl: string;
  env: Record<string, string>;
}

export function stateFilePath(): string {
  return localConfig.stateFile();
}

export function writeLocalState(state: LocalPlatformState, file = stateFilePath()): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(state, null, 2));
}

export function readLocalState(file = stateFilePath()): LocalPlatformState | null {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as LocalPlatformState;
  } catch {
    return null;
  }
}

export function removeLocalState(file = stateFilePath()): void {
  rmSync(file, { force: true });
}

/**
 * The user-level records of the running `npm run dev` platforms, so the CLI finds one from any folder (a
 * site's folder holds no .slipway/local.json): one file per checkout under
 * $XDG_STATE_HOME/slipway/platforms/ (else ~/.local/state/slipway/platforms/), so two checkouts' platforms
 * never overwrite each other's. Each holds the address only, never a credential.
 */
export interface RunningPlatform {
  pid: number;
  baseUrl: string;
  /** The checkout that runs it. */
  repo: string;
  started_at: string;
}

export function runningPlatformsDir(): string {
  return join(localConfig.userStateHome(), 'slipway', 'platforms');
}

/** The record of the platform a checkout runs: named after the checkout, and keyed by its whole path. */
export function runningPlatformPath(repo = process.cwd()): string {
  const key = createHash('sha256').update(resolve(repo)).digest('hex').slice(0, 12);
  return join(runningPlatformsDir(), `${basename(resolve(repo)) || 'root'}-${key}.json`);
}

export function writeRunningPlatform(state: RunningPlatform, file = runningPlatformPath(state.repo)): void {
  mkdirSync(dirname(file), { recursive: true });
  // Write then rename: a CLI reading at that instant sees the old file or the new one, never half of one.
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, JSON.stringify(state, null, 2));
  renameSync(temp, file);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, another user's.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A record, or null when it is missing, unreadable, or its platform is gone (killed without its stop). */
export function readRunningPlatform(file: string): RunningPlatform | null {
  let state: RunningPlatform;
  try {
    state = JSON.parse(readFileSync(file, 'utf8')) as RunningPlatform;
  } catch {
    return null;
  }
  return typeof state?.baseUrl === 'string' && Number.isInteger(state.pid) && alive(state.pid) ? state : null;
}

const inside = (dir: string, repo: string) => typeof repo === 'string' && (dir === repo || dir.startsWith(`${repo}${sep}`));

/**
 * The running platform the CLI uses from `cwd`: the one of the checkout `cwd` is in, else the one started
 * last (with its file, so the CLI can say which).
 */
export function findRunningPlatform(cwd = process.cwd()): { state: RunningPlatform; file: string } | null {
  let names: string[];
  try {
    names = readdirSync(runningPlatformsDir()).filter((name) => name.endsWith('.json'));
  } catch {
    return null;
  }
  const running = names
    .map((name) => ({ file: join(runningPlatformsDir(), name), state: readRunningPlatform(join(runningPlatformsDir(), name)) }))
    .filter((r): r is { file: string; state: RunningPlatform } => r.state !== null);
  const here = resolve(cwd);
  const own = running.filter((r) => inside(here, r.state.repo)).sort((a, b) => b.state.repo.length - a.state.repo.length)[0];
  return own ?? running.sort((a, b) => (a.state.started_at < b.state.started_at ? 1 : -1))[0] ?? null;
}

/** Removes the checkout's record if it is this process's: a platform started later in the same checkout keeps its own. */
export function removeRunningPlatform(pid = process.pid, file = runningPlatformPath()): void {
  const current = readRunningPlatform(file);
  if (current === null || current.pid === pid) rmSync(file, { force: true });
}
