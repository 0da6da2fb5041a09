import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ChangeMessageVisibilityBatchCommand, DeleteMessageCommand, ReceiveMessageCommand, type Message } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { sqs } from '../aws/sqs.ts';
import { config } from '../config.ts';
import { logger } from '../logger.ts';
import { workers, type WorkerRow } from '../workers.ts';
import { repoRoot } from './api-server.ts';
import type { LocalDriver } from './driver.ts';
import { localConfig } from '../local-config.ts';

/**
 * Plays the SQS event source mapping of every queue-triggered row of
 * lib/workers.ts: receives from the row's queue, calls the row's handler file
 * with the event Lambda would build (batchSize records), deletes the messages
 * it did not report as batch item failures, and leaves those to come back
 * after the visibility timeout (the queue's redrive policy moves a message
 * that keeps failing to its dead-letter queue, as in the cloud).
 *
 * Receives long-poll for LOCAL_QUEUE_WAIT_SECONDS (1 s): moto holds the call
 * on a condition and answers at once when a message is sent, and within a
 * second when a delayed or invisible one comes due. Short polls every 50 ms
 * had cost an idle platform about a fifth of a core and moto a quarter
 * (measured), paid by every test and by the functions door's throughput.
 * The wait stays short because a receive cannot be withdrawn: moto would hand
 * a message to a poll its caller had abandoned, hiding it for the visibility
 * timeout. So pausing and stopping let the poll in flight end, and make what
 * it brought visible again at once. LOCAL_QUEUE_WAIT_SECONDS=0 polls short
 * every pollMs instead. At most LOCAL_QUEUE_CONCURRENCY (16) handler calls run
 * at once per row.
 */

type QueueHandler = (event: SQSEvent) => Promise<SQSBatchResponse | void>;

function toRecord(message: Message, queueUrl: string): SQSRecord {
  const attributes = message.Attributes ?? {};
  return {
    messageId: message.MessageId!,
    receiptHandle: message.ReceiptHandle!,
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: attributes.SentTimestamp ?? String(Date.now()),
      SenderId: attributes.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:${config.awsRegion()}:000000000000:${queueUrl.split('/').pop()}`,
    awsRegion: config.awsRegion(),
  };
}

/** One SQS event source mapping as the driver plays it. */
export interface QueueConsumer {
  name: string;
  /** Read when the loop starts (the platform sets the environment first). */
  queueUrl: () => string;
  batchSize: number;
  /** Lambda gathers up to batchSize records for this long before it calls the function (MaximumBatchingWindowInSeconds). */
  batchingWindowSeconds?: number;
  /** At most this many calls at once (the mapping's ScalingConfig.MaximumConcurrency). */
  maxConcurrency?: number;
  /** With ReportBatchItemFailures only the reported records stay; without, a failed call keeps its whole batch. */
  reportBatchItemFailures: boolean;
  handler: () => Promise<QueueHandler>;
}

export interface QueueDriverOptions {
  /** Between checks while paused or full, and between short polls. */
  pollMs?: number;
  /** Long-poll seconds of each receive (0: short polls every pollMs). */
  waitSeconds?: number;
  concurrency?: number;
  rows?: readonly WorkerRow[];
  /** A row's handler made by the platform (by name) instead of imported from the row's file: wiring by argument. */
  handlers?: Readonly<Record<string, () => Promise<QueueHandler>>>;
}

export interface QueueDriver extends LocalDriver {
  /** Resolves once no handler call is running (tests). */
  idle(): Promise<void>;
  /** Stops and resumes receiving (tests: an invocation that waits in the queue). */
  pause(): void;
  resume(): void;
}

/** The queue-triggered rows of lib/workers.ts as the stack maps them (infra/workers.ts: ReportBatchItemFailures on). */
export function workerRowConsumers(
  rows: readonly WorkerRow[],
  handlers: Readonly<Record<string, () => Promise<QueueHandler>>> = {},
): QueueConsumer[] {
  return rows.flatMap((row) => {
    const trigger = row.trigger;
    if (trigger.kind !== 'queue') return [];
    return [
      {
        name: row.name,
        queueUrl: () => config.queueUrl(trigger.queue),
        batchSize: trigger.batchSize,
        reportBatchItemFailures: true,
        handler:
          handlers[row.name] ??
          (async () => {
            const mod = (await import(pathToFileURL(join(repoRoot, row.handler)).href)) as { handler?: QueueHandler };
            if (typeof mod.handler !== 'function') throw new Error(`${row.handler} exports no handler`);
            return mod.handler;
          }),
      },
    ];
  });
}

export function queueDriver(options: QueueDriverOptions = {}): QueueDriver {
  // A container-image row needs what its image holds (a browser): its own driver plays it where the machine has that.
  return queueConsumerDriver(workerRowConsumers(options.rows ?? workers.filter((row) => !row.image), options.handlers), options);
}

/** Messages received as the driver paused or stopped go back to the queue, visible at once. */
async function release(queueUrl: string, messages: Message[], worker: string): Promise<void> {
  try {
    await sqs().send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: queueUrl,
        Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle!, VisibilityTimeout: 0 })),
      }),
    );
  } catch (error) {
    logger.warn('queue driver could not give messages back', { worker, error: (error as Error).message });
  }
}

/** A long poll; the driver's stop ends it at once (`signal`) rather than after its wait. */
async function receive(queueUrl: string, max: number, wait: number, signal: AbortSignal): Promise<Message[]> {
  const reply = await sqs().send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: max,
      WaitTimeSeconds: wait,
      MessageSystemAttributeNames: ['All'],
    }),
    { abortSignal: signal },
  );
  return reply.Messages ?? [];
}

/** The batching window: receive more until the batch is full or the window has passed. */
async function fillBatch(
  consumer: QueueConsumer,
  queueUrl: string,
  messages: Message[],
  max: number,
  stopped: () => boolean,
  signal: AbortSignal,
): Promise<Message[]> {
  const windowEnds = Date.now() + (consumer.batchingWindowSeconds ?? 0) * 1000;
  while (!stopped() && messages.length < max && Date.now() < windowEnds) {
    const wait = Math.min(20, Math.ceil((windowEnds - Date.now()) / 1000));
    messages = [...messages, ...(await receive(queueUrl, Math.min(10, max - messages.length), wait, signal))];
  }
  return messages;
}

/** One call of the worker with a batch; the records it did not report failed are deleted (unless the driver stopped). */
function call(consumer: QueueConsumer, handler: QueueHandler, queueUrl: string, batch: Message[], stopped: () => boolean): Promise<void> {
  return (async () => {
    let failed = new Set(batch.map((m) => m.MessageId!));
    try {
      const reply = await handler({ Records: batch.map((m) => toRecord(m, queueUrl)) });
      failed = consumer.reportBatchItemFailures ? new Set((reply?.batchItemFailures ?? []).map((f) => f.itemIdentifier)) : new Set();
    } catch (error) {
      logger.error('queue worker failed', { worker: consumer.name, error: (error as Error).message });
    }
    if (stopped()) return;
    await Promise.all(
      batch
        .filter((m) => !failed.has(m.MessageId!))
        .map((m) =>
          sqs()
            .send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: m.ReceiptHandle! }))
            .catch((error: unknown) =>
              logger.warn('queue driver delete failed', { worker: consumer.name, error: (error as Error).message }),
            ),
        ),
    );
  })();
}

/** Resolves after ms, or at once when the signal aborts. */
function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });
}

export function queueConsumerDriver(consumers: readonly QueueConsumer[], options: Omit<QueueDriverOptions, 'rows'> = {}): QueueDriver {
  const pollMs = options.pollMs ?? localConfig.queuePollMs();
  const concurrency = options.concurrency ?? localConfig.queueConcurrency();
  const waitSeconds = options.waitSeconds ?? localConfig.queueWaitSeconds();
  let stopped = false;
  const isStopped = () => stopped;
  let paused = false;
  const abort = new AbortController();
  const loops: Promise<void>[] = [];
  const running = new Set<Promise<void>>();

  const sleep = (ms: number) => abortableSleep(ms, abort.signal);

  async function loop(consumer: QueueConsumer): Promise<void> {
    const handler = await consumer.handler();
    const inFlight = new Set<Promise<void>>();
    const limit = Math.min(concurrency, consumer.maxConcurrency ?? concurrency);
    const { batchSize } = consumer;
    while (!stopped) {
      // Configuration, read where it is used: never a value taken before the platform set it.
      const queueUrl = consumer.queueUrl();
      const free = limit - inFlight.size;
      if (paused || free < 1) {
        await Promise.race([...inFlight, sleep(pollMs)]);
        continue;
      }
      let messages: Message[] = [];
      const max = Math.min(10, free * batchSize);
      try {
        messages = await receive(queueUrl, max, waitSeconds, abort.signal);
        if (messages.length > 0 && messages.length < batchSize) {
          messages = await fillBatch(consumer, queueUrl, messages, Math.min(max, batchSize), isStopped, abort.signal);
        }
      } catch (error) {
        if (stopped) break;
        logger.error('queue driver receive failed', { worker: consumer.name, error: (error as Error).message });
        await sleep(pollMs * 10);
        continue;
      }
      if (messages.length > 0 && (stopped || paused)) {
        await release(queueUrl, messages, consumer.name);
        continue;
      }
      if (messages.length === 0) {
        if (waitSeconds === 0) await sleep(pollMs);
        continue;
      }
      for (let i = 0; i < messages.length; i += batchSize) {
        const running$ = call(consumer, handler, queueUrl, messages.slice(i, i + batchSize), isStopped);
        inFlight.add(running$);
        running.add(running$);
        void running$.finally(() => {
          inFlight.delete(running$);
          running.delete(running$);
        });
      }
    }
  }

  return {
    name: 'queues',
    start() {
      for (const consumer of consumers) {
        const logStopped = (error: unknown) =>
          logger.error('queue driver stopped', { worker: consumer.name, error: (error as Error).message });
        loops.push(loop(consumer).catch(logStopped));
      }
    },
    pause: () => (paused = true),
    resume: () => (paused = false),
    async idle() {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
    async stop() {
      stopped = true;
      abort.abort();
      await Promise.allSettled(loops);
      await Promise.allSettled([...running]);
    },
  };
}
