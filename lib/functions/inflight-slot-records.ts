import { keys } from '../db/keys.ts';
import { releaseLease, releaseLeaseWrite, takeLease, type LeaseList } from '../db/lease-list-records.ts';
import type { Write } from '../db/transact.ts';

/**
 * In-flight slots: the team item `FNINFLIGHT` holds a lease list (lib/db/lease-list-records.ts) of invocation
 * id -> expiry. A slot a dead platform never released expires and is pruned when the cap refuses.
 */

/** 10 queued invocations in flight per team (spec Limits). */
export const MAX_INFLIGHT_PER_TEAM = 10;
/** A slot is pruned this long after it was taken if nothing released it. */
const SLOT_LIFETIME_SECONDS = 15 * 60;

const inflightSlots = (teamId: string): LeaseList => ({
  key: keys.functionInflight(teamId),
  type: 'function_inflight',
  cap: MAX_INFLIGHT_PER_TEAM,
  lifetimeSeconds: SLOT_LIFETIME_SECONDS,
});

/** Takes an in-flight slot for `slotId`; false when the team has 10. One write when a slot is free, and when the cap refuses. */
export function takeInflightSlot(teamId: string, slotId: string, now = new Date()): Promise<boolean> {
  return takeLease(inflightSlots(teamId), slotId, now);
}

export function releaseInflightSlot(teamId: string, slotId: string): Promise<void> {
  return releaseLease(inflightSlots(teamId), slotId);
}

/** The release as a write of a transaction: an invocation's end and the release of its slot are one write. */
export function inflightSlotReleaseWrite(teamId: string, slotId: string): Write {
  return releaseLeaseWrite(inflightSlots(teamId), slotId);
}
