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

/**
 * `read`, remembered per key for routeCacheMs() from when it answered: a cached value answers without a
 * read, and callers that ask while a read is under way share it (a burst of polls makes one read).
 */
export function cachedReads<T>(read: (key: string) => Promise<T>, keepMs: () => number = routeCacheMs): (key: string) => Promise<T> {
  const entriesOf = perPlatform(() => new Map<string, { value: Promise<T>; until: number }>());
  return (key) => {
    const entries = entriesOf();
    const cached = entries.get(key);
    // Kept for no time (routeCacheMs() 0): no caller shares a read that began before it asked.
    if (cached && cached.until > Date.now() && (cached.until !== Number.POSITIVE_INFINITY || keepMs() > 0)) return cached.value;
    const entry = { value: read(key), until: Number.POSITIVE_INFINITY };
    entries.delete(key);
    entries.set(key, entry);
    if (entries.size > MAX_KEYS) entries.delete(entries.keys().next().value!);
    entry.value.then(
      () => {
        entry.until = Date.now() + keepMs();
      },
      () => {
        if (entries.get(key) === entry) entries.delete(key);
      },
    );
    return entry.value;
  };
}
