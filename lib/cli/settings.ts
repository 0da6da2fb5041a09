import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { readLocalState } from '../local/state.ts';
import { CliError } from './operator-env.ts';

/**
 * The user CLI's settings: the API address and token `slipway login` stores,
 * and which project each deployed folder publishes to. The file holds a
 * credential, so it is written with mode 0600 in a 0700 folder.
 */
export interface CliSettingsFile {
  api_url?: string;
  token?: string;
  /** Absolute folder path -> project id, per API address: `slipway deploy DIR` reuses the project. */
  links?: Record<string, Record<string, string>>;
}

export const DEFAULT_API_URL = 'http://localhost:3000';

export function settingsPath(): string {
  const base = process.env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'slipway', 'config.json');
}

export function readSettingsFile(file = settingsPath()): CliSettingsFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return {};
  }
  try {
    const parsed = JSON.parse(text) as unknown;
    return parsed && typeof parsed === 'object' ? (parsed as CliSettingsFile) : {};
  } catch {
    throw new CliError(`${file} is not valid JSON. Fix it or run \`slipway login\` again.`);
  }
}

export function writeSettingsFile(settings: CliSettingsFile, file = settingsPath()): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  // Write then rename, so a crash never leaves half a file; the mode is set before the token is in it.
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(settings, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temp, 0o600);
  renameSync(temp, file);
}

/** API address: SLIPWAY_API_URL, else the login file, else the running local platform, else localhost:3000. */
export function apiUrl(settings = readSettingsFile()): string {
  const url = process.env.SLIPWAY_API_URL || settings.api_url || readLocalState()?.baseUrl || DEFAULT_API_URL;
  return url.replace(/\/+$/, '');
}

/** Token: SLIPWAY_TOKEN, else the login file. */
export function apiToken(settings = readSettingsFile()): string {
  const token = process.env.SLIPWAY_TOKEN || settings.token;
  if (!token) throw new CliError('Not logged in: run `slipway login` or set SLIPWAY_TOKEN.');
  return token;
}

export function linkedProject(dir: string, api: string, settings = readSettingsFile()): string | null {
  return settings.links?.[api]?.[dir] ?? null;
}

export function linkProject(dir: string, api: string, projectId: string): void {
  const settings = readSettingsFile();
  // A redeploy of a linked folder: nothing to write.
  if (settings.links?.[api]?.[dir] === projectId) return;
  settings.links = { ...settings.links, [api]: { ...settings.links?.[api], [dir]: projectId } };
  writeSettingsFile(settings);
}
