import { chmodSync, mkdirSync, readFileSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { findRunningPlatform, readLocalState } from '../local/state.ts';
import { CliError, UsageError } from './operator-env.ts';
import { cliConfig } from './config.ts';

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
  return join(cliConfig.configHome(), 'slipway', 'config.json');
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

/** An API address and where it came from, for `login` to say. */
export interface ApiAddress {
  url: string;
  source: string;
}

/** The local platform `npm run dev` runs, found from any folder (its user-level record), else from this folder's .slipway/. */
function runningLocalPlatform(): ApiAddress | null {
  const running = findRunningPlatform();
  if (running) return { url: running.state.baseUrl, source: `the running local platform of ${running.state.repo} (${running.file})` };
  const here = readLocalState()?.baseUrl;
  return here ? { url: here, source: 'the local platform of this folder (.slipway/local.json)' } : null;
}

const trimmed = (address: ApiAddress): ApiAddress => ({ ...address, url: address.url.replace(/\/+$/, '') });

/**
 * API address: SLIPWAY_API_URL, else the login file, else the running local platform, else localhost:3000.
 * `login` prefers the running platform to an address saved by an earlier login (`preferRunning`).
 */
export function apiAddress(settings = readSettingsFile(), options: { preferRunning?: boolean } = {}): ApiAddress {
  const fromEnvironment = cliConfig.apiUrl();
  if (fromEnvironment) return trimmed({ url: fromEnvironment, source: 'SLIPWAY_API_URL' });
  const saved = settings.api_url ? { url: settings.api_url, source: `the address saved by the last login (${settingsPath()})` } : null;
  const found = options.preferRunning ? (runningLocalPlatform() ?? saved) : (saved ?? runningLocalPlatform());
  return trimmed(found ?? { url: DEFAULT_API_URL, source: 'the default address (no local platform is running)' });
}

export function apiUrl(settings = readSettingsFile()): string {
  return apiAddress(settings).url;
}

/** Token: SLIPWAY_TOKEN, else the login file. */
export function apiToken(settings = readSettingsFile()): string {
  const token = cliConfig.token() || settings.token;
  if (!token) throw new CliError('Not logged in: run `slipway login` or set SLIPWAY_TOKEN.');
  return token;
}

/** Build output folders: deployed as themselves, but named and linked as the app folder around them. */
export const BUILD_FOLDER_NAMES = new Set(['dist', 'build', 'out', 'public', '_site']);

/** The app folder a build output folder belongs to (its parent), or null for any other folder. */
export function enclosingApp(dir: string): string | null {
  return BUILD_FOLDER_NAMES.has(basename(dir)) && dirname(dir) !== dir ? dirname(dir) : null;
}

/** The folder's own link, else (for a build folder) the link of the app folder around it. */
export function linkedProject(dir: string, api: string, settings = readSettingsFile()): string | null {
  const links = settings.links?.[api];
  const app = enclosingApp(dir);
  return links?.[dir] ?? (app ? links?.[app] : undefined) ?? null;
}

/**
 * The project of a folder or of the nearest folder above it that has one: `rollback` in an app folder finds
 * the project its `dist/` was deployed to, and in `src/` the app's.
 */
export function findLinkedProject(dir: string, api: string, settings = readSettingsFile()): string | null {
  for (let at = dir; ; at = dirname(at)) {
    const linked = settings.links?.[api]?.[at];
    if (linked) return linked;
    if (dirname(at) === at) return null;
  }
}

/** Links the folder (and, for a build folder, its app folder) to the project. */
export function linkProject(dir: string, api: string, projectId: string): void {
  const settings = readSettingsFile();
  const app = enclosingApp(dir);
  const folders = app ? [dir, app] : [dir];
  // A redeploy of a linked folder: nothing to write.
  if (folders.every((folder) => settings.links?.[api]?.[folder] === projectId)) return;
  const mine = { ...settings.links?.[api] };
  for (const folder of folders) mine[folder] = projectId;
  settings.links = { ...settings.links, [api]: mine };
  writeSettingsFile(settings);
}

/** Forgets a link that names a project the platform no longer has (a provisional project that expired). */
export function unlinkProject(dir: string, api: string, projectId: string): void {
  const settings = readSettingsFile();
  const mine = { ...settings.links?.[api] };
  let changed = false;
  for (const folder of [dir, enclosingApp(dir)]) {
    if (folder && mine[folder] === projectId) {
      delete mine[folder];
      changed = true;
    }
  }
  if (!changed) return;
  settings.links = { ...settings.links, [api]: mine };
  writeSettingsFile(settings);
}

/** The folder's canonical path, the key of its project link. */
export function folderKey(dir: string): string {
  try {
    return realpathSync(resolve(dir));
  } catch {
    return resolve(dir);
  }
}

/** `--project`, else the project linked to this folder or the nearest folder above it. */
export function projectOfFolder(flag: string | undefined, api: string): string {
  if (flag) return flag;
  const linked = findLinkedProject(folderKey('.'), api);
  if (!linked) {
    throw new UsageError('Name the project with --project ID (`slipway projects` lists them), or run this in a folder you deployed.');
  }
  return linked;
}
