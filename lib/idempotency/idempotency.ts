import { createHash } from 'node:crypto';
import { config } from '../config.ts';
import { ApiError } from '../errors/api-error.ts';
import { IDEMPOTENCY_KEY_INVALID, IDEMPOTENCY_KEY_IN_PROGRESS, IDEMPOTENCY_KEY_REUSED } from '../errors/catalogue/sites.ts';
import { claimIdempotencyKey, completeIdempotencyKey, readIdempotencyKey, releaseIdempotencyKey } from './idempotency-records.ts';
import type { JsonObject } from '../json.ts';

/**
 * Idempotency-Key for requests that create things. A record per (team, key)
 * is claimed with a conditional write before anything is created; it carries
 * a hash of the request, and once the request succeeded, what is needed to
 * answer a replay with the original result. A different body under the same
 * key is refused; a concurrent duplicate waits for the first to finish.
 *
 * Written here rather than with @aws-lambda-powertools/idempotency: that
 * library keys records by a hash of the payload within one function, while
 * this API scopes keys to a team and must tell "same key, other body" (refused)
 * from a replay, and replays rebuild large responses (the `missing` list of a
 * 50,000-file manifest does not fit in one item) from the stored ids.
 */
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
/** How long a key is remembered. */
const RECORD_SECONDS = 24 * 3600;
/**
 * A claim older than this belongs to a request that died (the Lambda timeout is 29 s and a failed
 * request releases its claim), so a retry may take it over rather than wait for the 24-hour TTL.
 */
const ABANDONED_CLAIM_MS = 120_000;

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value as object)
        .sort()
        .map((k) => [k, canonical((value as JsonObject)[k])]),
    );
  }
  return value;
}

export function requestHash(scope: string, body: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify([scope, canonical(body)]))
    .digest('hex');
}

/** The header's value, checked; undefined when the request carries none. */
export function idempotencyKey(headers: Record<string, string>): string | undefined {
  const key = headers['idempotency-key'];
  if (key === undefined) return undefined;
  if (!KEY_PATTERN.test(key)) throw new ApiError(IDEMPOTENCY_KEY_INVALID);
  return key;
}

/**
 * Runs `execute` once per key: a retry with the same key and body gets `replay` of what the first run kept
 * (`stored`, of the caller's own shape S: one scope always stores the same shape).
 */
export async function idempotent<T, S extends JsonObject>(input: {
  teamId: string;
  key: string | undefined;
  /** What the key applies to (route and addressed resource): a key reused on another endpoint is another body. */
  scope: string;
  /**
   * Where keys live apart within the team (the queued door's: one function), so the same key elsewhere is
   * another key, not a reuse. Without it a key is the team's.
   */
  keyScope?: string;
  body: unknown;
  execute: () => Promise<{ result: T; stored: S }>;
  replay: (stored: S) => Promise<T>;
}): Promise<T> {
  if (input.key === undefined) return (await input.execute()).result;
  const keyHash = createHash('sha256')
    .update(input.keyScope === undefined ? input.key : `${input.keyScope}\n${input.key}`)
    .digest('hex');
  const bodyHash = requestHash(input.scope, input.body);
  const deadline = Date.now() + config.idempotencyWaitMs();

  for (;;) {
    const now = new Date();
    const claim = { teamId: input.teamId, keyHash, requestHash: bodyHash, now, recordSeconds: RECORD_SECONDS };
    if (await claimIdempotencyKey({ ...claim, abandonedBefore: new Date(now.getTime() - ABANDONED_CLAIM_MS) })) break;
    const existing = await readIdempotencyKey(input.teamId, keyHash);
    if (!existing) continue; // released by a failed first request: claim it ourselves
    if (existing.request_hash !== bodyHash) throw new ApiError(IDEMPOTENCY_KEY_REUSED);
    // The key's scope is this caller's, whose executions all stored an S.
    if (existing.state === 'completed') return input.replay(existing.stored as S);
    if (Date.now() > deadline) throw new ApiError(IDEMPOTENCY_KEY_IN_PROGRESS, { headers: { 'retry-after': '1' } });
    await new Promise((r) => setTimeout(r, 100));
  }

  let outcome: { result: T; stored: S };
  try {
    outcome = await input.execute();
  } catch (error) {
    // Nothing was created: release the key so a corrected or later retry can use it.
    await releaseIdempotencyKey(input.teamId, keyHash);
    throw error;
  }
  await completeIdempotencyKey(input.teamId, keyHash, outcome.stored);
  return outcome.result;
}
