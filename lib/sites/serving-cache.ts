import { tableWriteGeneration } from '../aws/table-writes.ts';
import { config, perPlatform } from '../config.ts';

/**
 * Deployed objects by content hash (the SHA-256 of their bytes, checked at
 * upload): what a hash names never changes, so a copy kept in memory is never
 * stale, whichever deployment, project or team serves it. Bounded by total
 * bytes (SITE_OBJECT_CACHE_BYTES, default 64 MiB) and per object
 * (SITE_OBJECT_CACHE_MAX_OBJECT_BYTES, default 1 MiB; larger objects are
 * streamed from storage every time); the least recently served goes first.
 * One per platform (lib/config.ts): one serve-site Lambda container, or each
 * local platform of a process.
 */
export class ObjectCache {
  private readonly held = perPlatform(() => ({ entries: new Map<string, Buffer>(), bytes: 0 }));

  /** Whether an object of this size is kept at all (read per call: configuration is never cached). */
  fits(size: number): boolean {
    return size <= config.siteObjectCacheMaxObjectBytes() && size <= config.siteObjectCacheBytes();
  }

  get(hash: string): Buffer | undefined {
    const { entries } = this.held();
    const bytes = entries.get(hash);
    if (bytes) {
      // Most recently served last: Map keeps insertion order.
      entries.delete(hash);
      entries.set(hash, bytes);
    }
    return bytes;
  }

  set(hash: string, bytes: Buffer): void {
    const held = this.held();
    if (!this.fits(bytes.length) || held.entries.has(hash)) return;
    const limit = config.siteObjectCacheBytes();
    for (const [oldest, old] of held.entries) {
      if (held.bytes + bytes.length <= limit) break;
      held.entries.delete(oldest);
      held.bytes -= old.length;
    }
    held.entries.set(hash, bytes);
    held.bytes += bytes.length;
  }

  get size(): { objects: number; bytes: number } {
    const { entries, bytes } = this.held();
    return { objects: entries.size, bytes };
  }
}

export const siteObjects = new ObjectCache();

/**
 * Table items the site server read, kept while no table write was made by
 * this process since (lib/aws/table-writes.ts), and only where every write
 * serving must see is made in this process: SITE_RECORD_CACHE=process, which
 * the local platform sets (its API, workers and drivers share its process).
 * Elsewhere (the serve-site Lambda, whose writers are other Lambdas) each
 * request reads the items, so a promote or a rollback shows on the very next
 * request either way.
 */
export class RecordCache<T> {
  /** Per platform (lib/config.ts): two local platforms of one process read two tables. */
  private readonly entriesOf = perPlatform(() => new Map<string, { value: T; generation: number }>());

  constructor(private readonly limit = 1000) {}

  /** The value kept for `key`, else what `read` gives (kept if no write happened meanwhile). */
  async get(key: string, read: () => Promise<T>): Promise<T> {
    if (config.siteRecordCache() !== 'process') return read();
    const entries = this.entriesOf();
    const kept = entries.get(key);
    const generation = tableWriteGeneration();
    if (kept && kept.generation === generation) return kept.value;
    const value = await read();
    if (tableWriteGeneration() === generation) {
      if (entries.size >= this.limit) entries.delete(entries.keys().next().value!);
      entries.set(key, { value, generation });
    }
    return value;
  }
}
