import { config } from '../config.ts';
import { isApiError } from '../errors/api-error.ts';
import { logger } from '../logger.ts';
import type { ResolvedAddress, Resolver } from '../sso/address-guard.ts';
import { pinnedLookup, requestFor } from '../sso/fetch-document.ts';
import { type CallbackMessage, queueCallbackAttempt } from './callback-queue.ts';
import { callbackSecret, callbackSignature } from './callback-secret.ts';
import { callbackUrlRefusals, checkCallbackUrl } from './callback-url.ts';
import { getInvocation, recordCallbackAttempt } from './invocation-records.ts';
import { invocationView } from './invocation-views.ts';
import { TERMINAL } from './invocations.ts';

/**
 * Completion callbacks (`X-Callback-Url` on the queued POST): once an invocation is terminal, the poll reply's
 * `data` is POSTed as JSON to the caller's URL, signed with the project's callback secret. Each attempt is one
 * message on the callbacks queue (the first queued by finishInvocation); a 2xx ends the delivery, anything else
 * queues the next attempt after the next delay (1 s, 5 s, 30 s, 2 min, 10 min: 6 attempts), so nothing waits in a
 * worker and nothing blocks the invocation. The URL is checked again at each attempt and the request goes to the
 * addresses checked then; redirects are not followed.
 *
 * Delivery is at least once: the next attempt is queued before this one is recorded, so a worker that dies
 * between them repeats an attempt rather than ending the chain. Receivers tell repeats by X-Slipway-Invocation-Id.
 */

type Outcome = { status: number | null; error: string | null };

export const CALLBACK_USER_AGENT = 'Slipway-Callbacks/1';

async function postOnce(
  url: URL,
  pinned: ResolvedAddress,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<Outcome> {
  const send = await requestFor(url);
  return new Promise((resolve) => {
    let settled = false;
    const settle = (outcome: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      resolve(outcome);
    };
    const request = send(
      url,
      {
        method: 'POST',
        // The socket goes to the address checked a moment ago, never to a second DNS answer; TLS still checks the host name.
        lookup: pinnedLookup(pinned),
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        agent: false,
      },
      (response) => {
        const status = response.statusCode ?? 0;
        if (status >= 200 && status < 300) settle({ status, error: null });
        else if (status >= 300 && status < 400)
          settle({ status, error: `The receiver answered ${status}, a redirect, which is not followed.` });
        else settle({ status, error: `The receiver answered ${status}.` });
      },
    );
    // One budget for the whole exchange, up to the reply's status line.
    const timer = setTimeout(
      () => settle({ status: null, error: `The receiver did not answer within ${Math.round(timeoutMs / 1000)} seconds.` }),
      timeoutMs,
    );
    request.on('error', () => settle({ status: null, error: 'The receiver could not be reached.' }));
    request.end(body);
  });
}

/** One attempt: the URL checked (and resolved) now, then the signed POST to its addresses in turn while none connects. */
async function attempt(
  record: { id: string; project_id: string; callback_url: string },
  body: string,
  resolve?: Resolver,
): Promise<Outcome> {
  const check = await checkCallbackUrl(record.callback_url, { resolve });
  if (!check.ok) return { status: null, error: callbackUrlRefusals[check.reason] };
  const secret = await callbackSecret(record.project_id);
  const headers = {
    'content-type': 'application/json',
    'user-agent': CALLBACK_USER_AGENT,
    'x-slipway-invocation-id': record.id,
    'x-slipway-signature': callbackSignature(secret, body, Math.floor(Date.now() / 1000)),
  };
  let outcome: Outcome = { status: null, error: 'The receiver could not be reached.' };
  for (const address of check.addresses) {
    outcome = await postOnce(check.url, address, body, headers, config.functionsCallbackTimeoutMs());
    if (outcome.status !== null) break;
  }
  return outcome;
}

/** Delivers one attempt of a message; a message for a callback already delivered or past this attempt does nothing. */
export async function deliverCallbackAttempt(message: CallbackMessage, options: { resolve?: Resolver } = {}): Promise<void> {
  const record = await getInvocation(message.invocation_id);
  if (!record?.callback_url || !TERMINAL.includes(record.status)) return;
  if (record.callback_delivered_at || (record.callback_attempts ?? 0) >= message.attempt) return;
  const body = JSON.stringify(await invocationView(record));
  let outcome: Outcome;
  try {
    outcome = await attempt({ id: record.id, project_id: record.project_id, callback_url: record.callback_url }, body, options.resolve);
  } catch (error) {
    // The project is gone (its invocations go with it): nothing is left to sign or to deliver.
    if (isApiError(error)) return;
    throw error;
  }
  const delivered = outcome.status !== null && outcome.status >= 200 && outcome.status < 300;
  const delays = config.functionsCallbackRetryDelaysSeconds();
  const delay = delivered ? undefined : delays[message.attempt - 1];
  if (delay !== undefined) await queueCallbackAttempt(record.id, message.attempt + 1, delay);
  await recordCallbackAttempt(record.id, {
    attempt: message.attempt,
    status: outcome.status,
    error: outcome.error,
    deliveredAt: delivered ? new Date().toISOString() : null,
  });
  logger.info('completion callback attempt', {
    invocation_id: record.id,
    attempt: message.attempt,
    status: outcome.status,
    delivered,
    next_in_seconds: delay ?? null,
  });
}

export function readCallbackMessage(body: unknown): { message: CallbackMessage } | { lacks: string } {
  const value = body as Partial<CallbackMessage> | null;
  if (typeof value?.invocation_id !== 'string') return { lacks: 'without an invocation_id' };
  if (!Number.isInteger(value.attempt) || (value.attempt as number) < 1) return { lacks: 'without an attempt number' };
  return { message: { invocation_id: value.invocation_id, attempt: value.attempt as number } };
}
