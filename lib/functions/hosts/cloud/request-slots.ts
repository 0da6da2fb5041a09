import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DeployedFunction } from '../../model.ts';
import { releaseRequestSlot, takeRequestSlot } from '../../request-slot-records.ts';

/**
 * The cloud host's cap on a function's requests at once (FunctionHost.holdRequestSlot): each request takes one of
 * the function's 30 slots in the table before its Lambda is invoked. The routers that hold the slots are other
 * Lambda environments, which cannot signal this one, so a request the cap refuses asks again after a short
 * backoff (growing to POLL_MAX_MS, with jitter so that waiters do not ask in step) until the door's budget ends.
 */

const POLL_FIRST_MS = 25;
const POLL_MAX_MS = 250;

/** Resolves with the slot's release once this request holds a slot; rejects when `signal` aborts first. */
export async function waitForRequestSlot(fn: DeployedFunction, signal: AbortSignal): Promise<() => Promise<void>> {
  const id = randomUUID();
  const release = () => releaseRequestSlot(fn.function_id, id);
  for (let delay = POLL_FIRST_MS; ; delay = Math.min(delay * 2, POLL_MAX_MS)) {
    signal.throwIfAborted();
    if (await takeRequestSlot(fn.function_id, id)) break;
    await sleep(delay / 2 + Math.random() * delay, undefined, { signal });
  }
  // The budget may have ended during the write that took it: the door no longer waits, so the slot goes back.
  if (signal.aborted) {
    await release();
    signal.throwIfAborted();
  }
  return release;
}
