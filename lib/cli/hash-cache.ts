import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliConfig } from './config.ts';

/**
 * The deploy's file-hash cache, as git's index: per deployed folder, each
 * file's SHA-256 with the stat facts it was hashed under (size, mtime and
 * ctime in ns, inode, device). A later deploy reuses a hash only when all of
 * them still match; anything else (an edit, a `touch`, a replaced file, an
 * edit that kept the size and put the mtime back: the ctime moved) is read
 * and hashed again.
 *
 * Racy entries (git's "racily clean" case): a file changed in the same clock
 * tick as the stat that recorded it could keep every stat fact. So an entry
 * is only saved when the file's last change (mtime or ctime) is older than the
 * start of that deploy's scan by RACY_MARGIN_MS (covering coarse timestamps,
 * e.g. FAT's 2 s); a file changed just before a deploy is simply hashed again
 * the next time.
 *
 * Where: $XDG_CACHE_HOME/slipway/hashes/ (else ~/.cache/slipway/hashes/), one
 * file per folder named by a hash of its absolute path. Not in the folder: a
 * file there would be deployed, or need a skip rule, and would show in the
 * user's `git status`; the cache dir is the place for data that can be deleted
 * at any time (deleting it only costs one full rehash).
 */

export const RACY_MARGIN_MS = 2000;
const VERSION = 1;

export interface StatFacts {
  size: number;
  /** `${size}:${mtimeNs}:${ctimeNs}:${ino}:${dev}`: equal strings, same file state. */
  fingerprint: string;
  /** Last change (mtime or ctime), in ms, for the racy rule. */
  changedMs: number;
}

export function statFacts(info: import('node:fs').BigIntStats): StatFacts {
  const changedNs = info.mtimeNs > info.ctimeNs ? info.mtimeNs : info.ctimeNs;
  return {
    size: Number(info.size),
    fingerprint: `${info.size}:${info.mtimeNs}:${info.ctimeNs}:${info.ino}:${info.dev}`,
    changedMs: Number(changedNs / 1_000_000n),
  };
}

interface CacheFile {
  version: number;
  root: string;
  /** path -> [fingerprint, sha256] */
  entries: Record<string, [string, string]>;
}

export function hashCacheDir(): string {
  return join(cliConfig.cacheHome(), 'slipway', 'hashes');
}

export class HashCache {
  private readonly fresh = new Map<string, [string, string]>();

  private constructor(
    readonly file: string,
    readonly root: string,
    private readonly old: Record<string, [string, string]>,
    /** When this deploy began looking at the files. */
    private readonly scanStartedMs: number,
  ) {}

  /** The cache of the folder `root` (absolute, canonical); an unreadable or foreign cache is an empty one. */
  static open(root: string, scanStartedMs = Date.now()): HashCache {
    const file = join(hashCacheDir(), `${createHash('sha256').update(root).digest('hex').slice(0, 32)}.json`);
    let entries: Record<string, [string, string]> = {};
    try {
      const parsed = JSON.parse(readFileSync(file, 'utf8')) as CacheFile;
      if (parsed.version === VERSION && parsed.root === root && parsed.entries && typeof parsed.entries === 'object')
        entries = parsed.entries;
    } catch {
      // No cache yet, or a damaged one: every file is hashed.
    }
    return new HashCache(file, root, entries, scanStartedMs);
  }

  /** The hash recorded for `path` under exactly these stat facts (kept for the next deploy), else undefined. */
  lookup(path: string, facts: StatFacts): string | undefined {
    const entry = this.old[path];
    if (!entry || entry[0] !== facts.fingerprint) return undefined;
    this.fresh.set(path, entry);
    return entry[1];
  }

  /** Records a hash for the next deploy, unless the file changed too recently to trust its stat facts. */
  record(path: string, facts: StatFacts, hash: string): void {
    if (facts.changedMs < this.scanStartedMs - RACY_MARGIN_MS) this.fresh.set(path, [facts.fingerprint, hash]);
  }

  /** Writes the entries recorded by this deploy (files gone since are dropped); best-effort, atomically. */
  save(): void {
    const body: CacheFile = { version: VERSION, root: this.root, entries: Object.fromEntries(this.fresh) };
    try {
      mkdirSync(hashCacheDir(), { recursive: true, mode: 0o700 });
      const tmp = `${this.file}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify(body), { mode: 0o600 });
      renameSync(tmp, this.file);
    } catch {
      // A cache that cannot be written only costs the next deploy a full rehash.
    }
  }
}
