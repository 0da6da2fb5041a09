import { ApiError } from '../../errors/api-error.ts';
import { GIT_WEBHOOK_HEADERS_MISSING, GIT_WEBHOOK_PAYLOAD_INVALID, GIT_WEBHOOK_SIGNATURE_INVALID } from '../../errors/catalogue/builds.ts';
import type { GitProvider } from '../delivery-records.ts';
import type { GitEvent } from '../events.ts';
import { receiveDelivery, type IntakeResult } from '../intake.ts';
import { type JsonObject } from '../../json.ts';

/** Largest delivery accepted: GitHub caps payloads at 25 MB, but a push of many commits is rarely over a few hundred KB. */
export const MAX_WEBHOOK_BYTES = 5 * 1024 * 1024;

/**
 * The shared path of both webhook endpoints: headers present, body a JSON
 * event of its type with a repository, then the intake (signature per
 * project, once per delivery id, the rules). A missing signature is refused
 * before anything is read.
 */
export async function receiveWebhook(input: {
  provider: GitProvider;
  rawBody: Buffer;
  signature: string | undefined;
  eventType: string | undefined;
  deliveryId: string | undefined;
  parse: (eventType: string, payload: JsonObject) => GitEvent | null;
  verify: (secret: string) => boolean;
}): Promise<IntakeResult> {
  if (!input.signature) throw new ApiError(GIT_WEBHOOK_SIGNATURE_INVALID, { details: { reason: 'missing' } });
  const missing = [!input.eventType && 'event', !input.deliveryId && 'delivery_id'].filter(Boolean);
  if (missing.length > 0) throw new ApiError(GIT_WEBHOOK_HEADERS_MISSING, { details: { missing } });
  let payload: unknown;
  try {
    payload = JSON.parse(input.rawBody.toString('utf8'));
  } catch {
    throw new ApiError(GIT_WEBHOOK_PAYLOAD_INVALID);
  }
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) throw new ApiError(GIT_WEBHOOK_PAYLOAD_INVALID);
  const event = input.parse(input.eventType!, payload as JsonObject);
  if (!event || event.repoUrls.length === 0) throw new ApiError(GIT_WEBHOOK_PAYLOAD_INVALID);
  return receiveDelivery({
    provider: input.provider,
    eventType: input.eventType!,
    deliveryId: input.deliveryId!.slice(0, 200),
    event,
    verify: input.verify,
  });
}
