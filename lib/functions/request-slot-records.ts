import { keys } from '../db/keys.ts';
import { releaseLease, takeLease, type LeaseList } from '../db/lease-list-records.ts';
import { CONCURRENT_REQUESTS_PER_INSTANCE, functionBudgetMs, MAX_INSTANCES_PER_FUNCTION } from './model.ts';

/**
 * Request slots of the HTTPS door in the cloud: the item `FNSLOTS#{function_id}` holds a lease list
 * (lib/db/lease-list-records.ts) of request id -> expiry. A Lambda environment serves one request and nothing
 * caps a function's environments, so the door holds the spec's per-function numbers itself: 10 requests per
 * instance, up to 3 instances, 30 at once.
 */

export const MAX_REQUESTS_PER_FUNCTION = CONCURRENT_REQUESTS_PER_INSTANCE * MAX_INSTANCES_PER_FUNCTION;

/**
 * A request ends within its budget (the door cuts a reply still streaming then), so a slot a router that crashed
 * or was frozen never gave back is pruned this long after the budget: room for the last writes of a reply.
 */
const SLOT_MARGIN_SECONDS = 30;

const requestSlots = (functionId: string): LeaseList => ({
  key: keys.functionRequestSlots(functionId),
  type: 'function_request_slots',
  cap: MAX_REQUESTS_PER_FUNCTION,
  lifetimeSeconds: Math.ceil(functionBudgetMs() / 1000) + SLOT_MARGIN_SECONDS,
});

/** Takes one of the function's 30 request slots for `requestId`; false when all are taken. */
export function takeRequestSlot(functionId: string, requestId: string, now = new Date()): Promise<boolean> {
  return takeLease(requestSlots(functionId), requestId, now);
}

export function releaseRequestSlot(functionId: string, requestId: string): Promise<void> {
  return releaseLease(requestSlots(functionId), requestId);
}
