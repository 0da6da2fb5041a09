import { config, perPlatform } from '../config.ts';
/**
 * Function look-ups kept per platform (lib/config.ts) for a short while: the HTTPS door's route per hostname, the queued
 * door's function per subdomain and name, a subdomain's project and a team's enrolment in the functions beta.
 * Each is read at most once per routeCacheMs() per key, so a promote, rollback, removal or change of enrolment
 * is seen within that time (the spec's promote is a pointer move; nothing promises it sooner).
 */

/** FUNCTIONS_ROUTE_CACHE_MS (0 reads every time, as tests about those changes do); 1 s by default. */
export function routeCacheMs(): number {
  return config.functionsRouteCacheMs();
}

/** Keys kept at most; the oldest goes first. */
const MAX_KEYS = 10_000;

/** A key's read, remembered: `answered` holds its value once it has come (until then the promise is all there is). */
interface Entry<T> {
  value: Promise<T>;
  until: number;
  answered?: { value: T };
}

/** The reads of cachedReads, and `peek`: a key's value when one is kept and fresh, without a promise (a hot path's). */
export type CachedReads<T> = ((key: string) => Promise<T>) & { peek(key: string): { value: T } | undefined };

/**
 * `read`, remembered per key for routeCacheMs() from when it answered: a cached value answers without a
 * read, and callers that ask while a read is under way share it (a burst of polls makes one read).
 */
export function cachedReads<T>(read: (key: string) => Promise<T>, keepMs: () => number = routeCacheMs): CachedReads<T> {
  const entriesOf = perPlatform(() => new Map<string, Entry<T>>());
  const fresh = (key: string): Entry<T> | undefined => {
    const cached = entriesOf().get(key);
    // Kept for no time (routeCacheMs() 0): no caller shares a read that began before it asked.
    return cached && cached.until > Date.now() && (cached.until !== Number.POSITIVE_INFINITY || keepMs() > 0) ? cached : undefined;
  };
  const reads = (key: string): Promise<T> => {
    const cached = fresh(key);
    if (cached) return cached.value;
    const entries = entriesOf();
    const entry: Entry<T> = { value: read(key), until: Number.POSITIVE_INFINITY };
    entries.delete(key);
    entries.set(key, entry);
    if (entries.size > MAX_KEYS) entries.delete(entries.keys().next().value!);
    entry.value.then(
      (value) => {
        entry.until = Date.now() + keepMs();
        entry.answered = { value };
      },
      () => {
        if (entries.get(key) === entry) entries.delete(key);
      },
    );
    return entry.value;
  };
  return Object.assign(reads, { peek: (key: string) => fresh(key)?.answered });
}
