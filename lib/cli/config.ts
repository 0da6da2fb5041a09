import { platformEnv } from '../config.ts';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * The CLI's configuration: every environment variable the CLI reads, read at call time (a test changes them
 * between commands in one process). The CLI is a program of its own; the library code it runs in-process
 * (the operator commands) reads lib/config.ts, which supplyOperatorEnvironment feeds.
 */
const text = (name: string): string | undefined => process.env[name] || undefined;

/** Set and not empty, 0 or false (NO_COLOR, CI). */
function flag(name: string): boolean {
  const value = process.env[name];
  return value !== undefined && value !== '' && value !== '0' && value.toLowerCase() !== 'false';
}

function positiveNumber(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

function nonNegativeNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = Number(raw);
  return raw !== undefined && raw !== '' && Number.isFinite(value) && value >= 0 ? value : fallback;
}

export const cliConfig = {
  /** SLIPWAY_API_URL: the API address, before the login file's and a running local platform's. */
  apiUrl: () => text('SLIPWAY_API_URL'),
  /** SLIPWAY_TOKEN: the credential, before the login file's. */
  token: () => text('SLIPWAY_TOKEN'),
  /** The folder of the login file's folder: $XDG_CONFIG_HOME, else ~/.config. */
  configHome: () => text('XDG_CONFIG_HOME') ?? join(homedir(), '.config'),
  /** The folder of the file-hash cache's folder: $XDG_CACHE_HOME, else ~/.cache. */
  cacheHome: () => text('XDG_CACHE_HOME') ?? join(homedir(), '.cache'),
  /** SLIPWAY_HTTP_TIMEOUT_MS: a connection silent this long is given up (tests keep it short). */
  httpTimeoutMs: () => positiveNumber('SLIPWAY_HTTP_TIMEOUT_MS', 300_000),
  /** SLIPWAY_RETRY_ATTEMPTS and SLIPWAY_RETRY_BASE_MS tune the retry policy (tests keep their waits short). */
  retryAttempts: (fallback: number) => nonNegativeNumber('SLIPWAY_RETRY_ATTEMPTS', fallback),
  retryBaseMs: (fallback: number) => nonNegativeNumber('SLIPWAY_RETRY_BASE_MS', fallback),
  /** The PATH children are started with (`git http-backend`). */
  searchPath: () => process.env.PATH ?? '',
  /** PORT, as given: `slipway dev`'s port when --port is not (the command checks it). */
  devPort: () => process.env.PORT,
  /** Plain lines instead of progress drawing: NO_COLOR (no-color.org) or CI set, or a dumb terminal. */
  plainOutput: () => flag('NO_COLOR') || flag('CI') || process.env.TERM === 'dumb',
  /** SLIPWAY_GIT_PORT: the loopback port `slipway git serve` listens on and `git hook install` names (9400). */
  gitServePort: () => positiveNumber('SLIPWAY_GIT_PORT', 9400),
  /** TABLE_NAME: operator commands work on that deployment's table rather than the running local platform's. */
  // In a process that runs a local platform (tests, `slipway dev`), the operator commands act on that platform's table.
  operatorTable: () => platformEnv().variable('TABLE_NAME') || undefined,
};

/**
 * Hands the running local platform's variables (its state file) to the library code an operator command runs
 * in-process: AWS defaults where unset, then the state file's values where unset or empty, so nothing talks to a
 * real AWS endpoint by accident.
 */
export function supplyOperatorEnvironment(local: Readonly<Record<string, string>>): void {
  process.env.AWS_REGION ??= 'us-east-1';
  process.env.AWS_ACCESS_KEY_ID ??= 'test';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'test';
  for (const [name, value] of Object.entries(local)) if (!process.env[name]) process.env[name] = value;
}
