import { randomUUID } from 'node:crypto';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  ListQueuesCommand,
  ListQueueTagsCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
} from '@aws-sdk/client-sqs';
import { sqs } from '../aws/sqs.ts';
import { config } from '../config.ts';
import { logger } from '../logger.ts';
import type { FunctionRecord } from './model.ts';
import { cachedReads } from './route-cache.ts';
import {
  deleteExpiredTailSession,
  deleteTailSession,
  getTailSession,
  listOpenTailSessions,
  putTailSession,
  renewTailSession,
  type TailSession,
} from './tail-session-records.ts';

/**
 * Live tail (docs/functions.md, "Live tail"): what a function prints, throws and answers, streamed to the team
 * members watching it, and kept nowhere (the spec: HTTPS calls are not recorded).
 *
 * A watcher opens a short-lived queue of its own and a session item naming it (tail-session-records.ts). The door
 * learns whether anyone watches a function from those items, read at most once per FUNCTIONS_TAIL_CACHE_MS (3 s)
 * per door process and function, and only then forwards anything: a function nobody watches costs that one
 * read, no message. The queue keeps a message at most 60 s (SQS's least) and goes when the watcher leaves.
 */

export type TailEvent =
  /** A console line (stdout or stderr) of the function. */
  | { type: 'console'; at: string; stream: 'stdout' | 'stderr'; line: string }
  /** An error the handler threw, or its promise rejected with. */
  | { type: 'error'; at: string; message: string; stack: string }
  /**
   * A call's end: the status the caller got (null: the caller went away before any), how long the door took from
   * the request to the reply's end, and how it ended (`response`, `handler_error`, `invalid_response`, or the
   * door's own: `body_too_large`, `timed_out`, `failed`, `caller_gone`).
   */
  | { type: 'call'; at: string; method: string; status: number | null; duration_ms: number; outcome: string };

/** SQS takes 256 KiB a message; events go in messages of at most this much JSON. */
const MESSAGE_BYTES = 200 * 1024;
/** A session the watcher has not renewed for this long is fed no more. */
export const TAIL_SESSION_TTL_MS = 90_000;
/** Events wait this long for others to go in the same message (a call's lines and its end). */
const FLUSH_DELAY_MS = 20;

/** The door's side: forwards a function's events to its watchers' queues, only while someone watches. */
export class FunctionTailPublisher {
  private readonly queuesOf = cachedReads(
    (functionId) =>
      listOpenTailSessions(functionId).then(
        (sessions) => sessions.map((session) => session.queue_url),
        (error: unknown) => {
          logger.warn('function tail sessions not read', { function_id: functionId, error: String(error) });
          return [] as string[];
        },
      ),
    () => config.functionsTailCacheMs(),
  );
  private readonly buffered = new Map<string, { queues: string[]; events: TailEvent[] }>();
  private timer: NodeJS.Timeout | null = null;
  private readonly sending = new Set<Promise<void>>();

  /** Whether someone watches the function (as of the last read, at most FUNCTIONS_TAIL_CACHE_MS old). */
  async watching(fn: Pick<FunctionRecord, 'function_id'>): Promise<boolean> {
    return this.watchingNow(fn) ?? (await this.queuesOf(fn.function_id)).length > 0;
  }

  /** The same answer when the last read is kept and fresh, without a promise; undefined when a read is needed. */
  watchingNow(fn: Pick<FunctionRecord, 'function_id'>): boolean | undefined {
    const kept = this.queuesOf.peek(fn.function_id);
    return kept && kept.value.length > 0;
  }

  /** Queues events for the function's watchers; nothing when nobody watches. Never throws. */
  publish(fn: Pick<FunctionRecord, 'function_id'>, ...events: TailEvent[]): void {
    if (events.length === 0) return;
    void this.queuesOf(fn.function_id).then((queues) => {
      if (queues.length === 0) return;
      const entry = this.buffered.get(fn.function_id);
      if (entry) {
        entry.queues = queues;
        entry.events.push(...events);
      } else this.buffered.set(fn.function_id, { queues, events: [...events] });
      this.timer ??= setTimeout(() => {
        this.timer = null;
        this.sendBuffered();
      }, FLUSH_DELAY_MS);
    });
  }

  /** Sends what is queued now and waits for every send (a Lambda that has returned is frozen). */
  async flush(): Promise<void> {
    // Events published just before run their look-up's continuation first.
    await new Promise((resolve) => setImmediate(resolve));
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    this.sendBuffered();
    await Promise.allSettled([...this.sending]);
  }

  private sendBuffered(): void {
    const batches = [...this.buffered.values()];
    this.buffered.clear();
    for (const { queues, events } of batches) {
      const bodies = messageBodies(events);
      for (const queueUrl of queues) {
        const sent = sendBodies(queueUrl, bodies);
        this.sending.add(sent);
        void sent.finally(() => this.sending.delete(sent));
      }
    }
  }
}

function messageBodies(events: TailEvent[]): string[] {
  const bodies: string[] = [];
  let current: string[] = [];
  let size = 0;
  for (const event of events) {
    const json = JSON.stringify(event);
    if (current.length > 0 && size + json.length > MESSAGE_BYTES) {
      bodies.push(`[${current.join(',')}]`);
      current = [];
      size = 0;
    }
    current.push(json);
    size += json.length + 1;
  }
  if (current.length > 0) bodies.push(`[${current.join(',')}]`);
  return bodies;
}

async function sendBodies(queueUrl: string, bodies: string[]): Promise<void> {
  for (let at = 0; at < bodies.length; at += 10) {
    const entries = bodies.slice(at, at + 10).map((body, index) => ({ Id: String(index), MessageBody: body }));
    try {
      await sqs().send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
    } catch (error) {
      // The watcher left (its queue is gone) since the door last read the sessions: nobody to tell.
      logger.debug('function tail event not sent', { error: String(error) });
      return;
    }
  }
}

/** The tag of a tail's queue that names its function: with the queue's name (the session id) it finds the session. */
export const TAIL_FUNCTION_TAG = 'slipway:function';

/** The watcher's side: a session and its queue, made when a tail opens. */
export async function openTailChannel(functionId: string): Promise<TailSession> {
  const sessionId = randomUUID();
  const created = await sqs().send(
    new CreateQueueCommand({
      QueueName: `${config.functionsTailQueuePrefix()}${sessionId}`,
      // The least SQS allows: a line nobody read within a minute is gone.
      Attributes: { MessageRetentionPeriod: '60' },
      tags: { [TAIL_FUNCTION_TAG]: functionId },
    }),
  );
  const session: TailSession = {
    session_id: sessionId,
    function_id: functionId,
    queue_url: created.QueueUrl!,
    expires_at: Date.now() + TAIL_SESSION_TTL_MS,
  };
  try {
    await putTailSession(session);
  } catch (error) {
    await sqs()
      .send(new DeleteQueueCommand({ QueueUrl: session.queue_url }))
      .catch(() => {});
    throw error;
  }
  return session;
}

/** The events that reached the watcher's queue, waiting up to `waitSeconds` for some; [] when the signal ends the wait. */
export async function receiveTailEvents(session: TailSession, waitSeconds: number, signal: AbortSignal): Promise<TailEvent[]> {
  let reply;
  try {
    reply = await sqs().send(
      new ReceiveMessageCommand({ QueueUrl: session.queue_url, MaxNumberOfMessages: 10, WaitTimeSeconds: waitSeconds }),
      { abortSignal: signal },
    );
  } catch (error) {
    if (signal.aborted) return [];
    throw error;
  }
  const messages = reply.Messages ?? [];
  if (messages.length === 0) return [];
  await sqs().send(
    new DeleteMessageBatchCommand({
      QueueUrl: session.queue_url,
      Entries: messages.map((message, index) => ({ Id: String(index), ReceiptHandle: message.ReceiptHandle! })),
    }),
  );
  const events: TailEvent[] = [];
  for (const message of messages) {
    try {
      events.push(...(JSON.parse(message.Body ?? '[]') as TailEvent[]));
    } catch {
      // Only doors write there; a malformed message is dropped.
    }
  }
  return events.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
}

export async function renewTailChannel(session: TailSession): Promise<boolean> {
  const expiresAt = Date.now() + TAIL_SESSION_TTL_MS;
  const renewed = await renewTailSession(session, expiresAt);
  if (renewed) session.expires_at = expiresAt;
  return renewed;
}

/** The watcher left: the session goes first (doors stop sending), then the queue with whatever it still held. */
export async function closeTailChannel(session: TailSession): Promise<void> {
  await deleteTailSession(session).catch((error: unknown) =>
    logger.warn('function tail session not deleted', { function_id: session.function_id, error: String(error) }),
  );
  await sqs()
    .send(new DeleteQueueCommand({ QueueUrl: session.queue_url }))
    .catch((error: unknown) => logger.warn('function tail queue not deleted', { queue_url: session.queue_url, error: String(error) }));
}

/** A tail ends itself before a Lambda's 15 minutes; the client opens a new one (the CLI and the console do). */
export const TAIL_MAX_MS = 14 * 60_000;
/** ReceiveMessage's longest wait; a silent tail also sends a comment this often, under CloudFront's 60 s read timeout. */
const TAIL_WAIT_SECONDS = 20;

const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

function write(out: import('node:stream').Writable, text: string): Promise<void> {
  if (out.destroyed) return Promise.resolve();
  if (out.write(text)) return Promise.resolve();
  return new Promise((resolve) => {
    out.once('drain', resolve);
    out.once('close', resolve);
  });
}

/**
 * One watcher's tail as server-sent events, until the signal aborts (the watcher left) or TAIL_MAX_MS: `open`
 * once the session is there (calls from then on are shown, within FUNCTIONS_TAIL_CACHE_MS), then `console`,
 * `error` and `call` events as they come, and `end` when the tail ends itself. Nothing is left behind.
 */
export async function streamFunctionTail(
  fn: Pick<FunctionRecord, 'function_id' | 'name'>,
  out: import('node:stream').Writable,
  signal: AbortSignal,
): Promise<void> {
  const session = await openTailChannel(fn.function_id);
  const ends = Date.now() + TAIL_MAX_MS;
  const waiting = AbortSignal.any([signal, AbortSignal.timeout(TAIL_MAX_MS)]);
  try {
    await write(out, sse('open', { function: fn.name, watch_from: new Date().toISOString() }));
    while (!waiting.aborted && !out.destroyed) {
      if (session.expires_at - Date.now() < TAIL_SESSION_TTL_MS / 2 && !(await renewTailChannel(session))) break;
      const waitSeconds = Math.max(0, Math.min(TAIL_WAIT_SECONDS, Math.floor((ends - Date.now()) / 1000)));
      const events = await receiveTailEvents(session, waitSeconds, waiting);
      if (events.length === 0) await write(out, ': waiting\n\n');
      for (const { type, ...data } of events) await write(out, sse(type, data));
      if (Date.now() >= ends) break;
    }
    if (!signal.aborted) await write(out, sse('end', { reason: 'The tail ends after 14 minutes; open it again to go on.' }));
  } finally {
    await closeTailChannel(session);
  }
}

/**
 * A queue with no session is left alone this long: a tail being opened makes its queue just before its session.
 * A queue whose function is not known (no tag) is left alone until no tail can still be open.
 */
const UNSESSIONED_GRACE_MS = 5 * 60_000;
const UNKNOWN_GRACE_MS = TAIL_MAX_MS + TAIL_SESSION_TTL_MS;

export interface TailQueueSweepReport {
  kept: number;
  removed: string[];
}

/**
 * Removes the queues of tails whose watcher went without closing them (its Lambda was killed, its process died):
 * each tail queue whose session has expired (the session goes first, by a conditional delete on the expiry read,
 * so a watcher that renewed it meanwhile keeps both), or has no session past UNSESSIONED_GRACE_MS. Run by the
 * cloud sweep (handlers/workers/cloud-sweep.ts). A queue that fails is left for the next sweep.
 */
export async function sweepTailQueues(options: { now?: number } = {}): Promise<TailQueueSweepReport> {
  const now = options.now ?? Date.now();
  const prefix = config.functionsTailQueuePrefix();
  const report: TailQueueSweepReport = { kept: 0, removed: [] };
  let nextToken: string | undefined;
  do {
    const page = await sqs().send(new ListQueuesCommand({ QueueNamePrefix: prefix, MaxResults: 1000, NextToken: nextToken }));
    nextToken = page.NextToken;
    for (const queueUrl of page.QueueUrls ?? []) {
      try {
        if (await abandoned(queueUrl, prefix, now)) {
          await sqs().send(new DeleteQueueCommand({ QueueUrl: queueUrl }));
          report.removed.push(queueUrl);
        } else report.kept += 1;
      } catch (error) {
        logger.warn('tail queue not swept', { queue_url: queueUrl, error: String(error) });
      }
    }
  } while (nextToken);
  return report;
}

async function abandoned(queueUrl: string, prefix: string, now: number): Promise<boolean> {
  const sessionId = decodeURIComponent(queueUrl.slice(queueUrl.lastIndexOf('/') + 1)).slice(prefix.length);
  const tags = await sqs().send(new ListQueueTagsCommand({ QueueUrl: queueUrl }));
  const functionId = tags.Tags?.[TAIL_FUNCTION_TAG];
  const session = functionId ? await getTailSession(functionId, sessionId) : null;
  if (session) return Number(session.expires_at) <= now && (await deleteExpiredTailSession(session));
  const attributes = await sqs().send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['CreatedTimestamp'] }));
  const createdAt = Number(attributes.Attributes?.CreatedTimestamp) * 1000;
  return Number.isFinite(createdAt) && now - createdAt > (functionId ? UNSESSIONED_GRACE_MS : UNKNOWN_GRACE_MS);
}
