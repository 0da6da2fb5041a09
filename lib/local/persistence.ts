import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { localConfig } from '../local-config.ts';

/**
 * What `npm run dev` keeps across a stop and a start (issue 21, "nothing lost
 * on restart"), in one folder (`.slipway/state/` of the checkout, ignored by git):
 *
 * - `moto.pickle`: everything the moto_server it starts holds (the table, the
 *   buckets and their objects, the queues with their messages, the schedules,
 *   domains' certificates and distributions), saved by moto itself at stop and
 *   while it runs (lib/local/moto-python/sitecustomize.py says how and why).
 * - `secrets.json`: the secrets the platform makes for itself (environment
 *   variable encryption key, Git state secret, forge signing key, billing webhook secret). Stored
 *   values are sealed with them: new ones per run would make every stored
 *   variable unreadable after a restart.
 *
 * `npm run dev -- --fresh` empties the folder first.
 */
export const KEPT_SECRETS = {
  ENV_ENCRYPTION_KEY: () => randomBytes(32).toString('base64'),
  GIT_STATE_SECRET: () => randomBytes(32).toString('base64url'),
  // The seed of the forge tokens' ES256 key (lib/git/forge-keys.ts): forges that cached the JWKS keep verifying after a restart.
  FORGE_SIGNING_KEY: () => randomBytes(32).toString('base64url'),
  BILLING_WEBHOOK_SECRET: () => `whsec_${randomBytes(24).toString('base64url')}`,
} as const;

export interface LocalStateFolder {
  dir: string;
  /** The kept secrets the environment does not set, for the platform's settings. */
  secrets: Record<string, string>;
  /** The environment that makes moto_server load and save its state (lib/local/moto.ts passes it on). */
  motoEnv: Record<string, string>;
  /** After moto started: whether it resumed a saved state, and the sentence the start log prints. */
  outcome(): { resumed: boolean; sentence: string };
}

/**
 * Each mode keeps its own state: the synthesized mode's resources have the template's names, so the source
 * mode's table and buckets would be there but none of it would be seen (`.slipway/state/` and
 * `.slipway/state-synth/` of the checkout).
 */
export type LocalMode = 'source' | 'synth';

export function localStateDir(root = process.cwd(), mode: LocalMode = 'source'): string {
  const dir = localConfig.stateDir(root);
  return mode === 'synth' ? `${dir}-synth` : dir;
}

/** When moto saved the state, as a person reads it (its status file carries seconds since the epoch). */
export function savedAtText(savedAt: unknown): string {
  if (typeof savedAt !== 'number' || !Number.isFinite(savedAt)) return 'earlier';
  const at = new Date(savedAt * 1000);
  const pad = (n: number) => String(n).padStart(2, '0');
  return (
    `saved ${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())} ${pad(at.getHours())}:${pad(at.getMinutes())}:` +
    `${pad(at.getSeconds())} local time`
  );
}

/**
 * Each kept secret the environment does not set (a value the developer chose wins and is not stored): from
 * the folder, else made now and stored (mode 0600). The platform is given them as settings (lib/local/dev.ts).
 */
export function keptSecrets(dir: string): Record<string, string> {
  const kept: Record<string, string> = {};
  const file = join(dir, 'secrets.json');
  let stored: Record<string, string> = {};
  try {
    stored = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
  } catch {
    // None yet (or unreadable): made anew below.
  }
  let added = false;
  for (const [name, make] of Object.entries(KEPT_SECRETS)) {
    if (localConfig.variable(name)) continue;
    if (typeof stored[name] !== 'string' || stored[name] === '') {
      stored[name] = make();
      added = true;
    }
    kept[name] = stored[name];
  }
  if (!added) return kept;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(file, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return kept;
}

/** Opens (or, with `fresh`, empties) the state folder of `npm run dev`, with the kept secrets. */
export function openLocalState(options: { dir?: string; fresh?: boolean; mode?: LocalMode } = {}): LocalStateFolder {
  const mode = options.mode ?? 'source';
  const dir = options.dir ?? localStateDir(process.cwd(), mode);
  const other = mode === 'synth' ? 'the source mode (npm run dev)' : 'the synthesized mode (--synth)';
  const kept = `${mode === 'synth' ? 'the synthesized' : 'the source'} mode's state; ${other} keeps its own`;
  if (options.fresh) rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const secrets = keptSecrets(dir);
  const stateFile = join(dir, 'moto.pickle');
  const statusFile = `${stateFile}.status.json`;
  rmSync(statusFile, { force: true });
  return {
    dir,
    secrets,
    motoEnv: { SLIPWAY_MOTO_STATE_FILE: stateFile },
    outcome() {
      let status: { resumed?: boolean; reason?: string; saved_at?: unknown } = {};
      if (existsSync(statusFile)) {
        try {
          status = JSON.parse(readFileSync(statusFile, 'utf8')) as typeof status;
        } catch {
          // Half written: treated as not resumed.
        }
      }
      if (status.resumed)
        return { resumed: true, sentence: `resumed the state saved in ${dir} (${savedAtText(status.saved_at)}; ${kept})` };
      const why = options.fresh ? '--fresh' : (status.reason ?? 'no saved state');
      return { resumed: false, sentence: `started empty (${why}); the state is kept in ${dir} (${kept})` };
    },
  };
}
