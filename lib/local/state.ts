import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { localConfig } from './local-config.ts';

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
 * The user-level record of the running `npm run dev`, so the CLI finds the
 * platform from any folder (a site's folder holds no .slipway/local.json):
 * $XDG_STATE_HOME/slipway/local-platform.json, else ~/.local/state/slipway/.
 * Holds the address only, never a credential.
 */
export interface RunningPlatform {
  pid: number;
  baseUrl: string;
  /** The checkout that runs it. */
  repo: string;
  started_at: string;
}

export function runningPlatformPath(): string {
  return join(localConfig.userStateHome(), 'slipway', 'local-platform.json');
}

export function writeRunningPlatform(state: RunningPlatform, file = runningPlatformPath()): void {
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

/** The running platform, or null when none is recorded or the one recorded is gone (killed without its stop). */
export function readRunningPlatform(file = runningPlatformPath()): RunningPlatform | null {
  let state: RunningPlatform;
  try {
    state = JSON.parse(readFileSync(file, 'utf8')) as RunningPlatform;
  } catch {
    return null;
  }
  return typeof state?.baseUrl === 'string' && Number.isInteger(state.pid) && alive(state.pid) ? state : null;
}

/** Removes the record if it is this process's: a platform started later in another checkout keeps its own. */
export function removeRunningPlatform(pid = process.pid, file = runningPlatformPath()): void {
  const current = readRunningPlatform(file);
  if (current === null || current.pid === pid) rmSync(file, { force: true });
}
