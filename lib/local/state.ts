import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

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
  return process.env.SLIPWAY_STATE_FILE || join(process.cwd(), '.slipway', 'local.json');
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
