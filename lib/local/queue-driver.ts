import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ChangeMessageVisibilityBatchCommand, DeleteMessageCommand, ReceiveMessageCommand, type Message } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { sqs } from '../aws/sqs.ts';
import { config } from '../config.ts';
import { logger } from '../http/logger.ts';
import { workers, type WorkerRow } from '../workers.ts';
import { repoRoot } from './api-server.ts';
import type { LocalDriver } from './platform.ts';

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

export interface QueueDriverOptions {
  /** Between checks while paused or full, and between short polls. */
  pollMs?: number;
  /** Long-poll seconds of each receive (0: short polls every pollMs). */
  waitSeconds?: number;
  concurrency?: number;
  rows?: readonly WorkerRow[];
}

export interface QueueDriver extends LocalDriver {
  /** Resolves once no handler call is running (tests). */
  idle(): Promise<void>;
  /** Stops and resumes receiving (tests: an invocation that waits in the queue). */
  pause(): void;
  resume(): void;
}

export function queueDriver(options: QueueDriverOptions = {}): QueueDriver {
  const pollMs = options.pollMs ?? Number(process.env.LOCAL_QUEUE_POLL_MS || 50);
  const concurrency = options.concurrency ?? Number(process.env.LOCAL_QUEUE_CONCURRENCY || 16);
  const waitSeconds = options.waitSeconds ?? Math.min(20, Math.max(0, Number(process.env.LOCAL_QUEUE_WAIT_SECONDS ?? 1) || 0));
  // A container-image row needs what its image holds (a browser): its own driver plays it where the machine has that.
  const rows = (options.rows ?? workers.filter((row) => !row.image)).filter((row) => row.trigger.kind === 'queue');
  let stopped = false;
  let paused = false;
  const abort = new AbortController();
  const loops: Promise<void>[] = [];
  const running = new Set<Promise<void>>();

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      abort.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });

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

  async function loop(row: WorkerRow): Promise<void> {
    const trigger = row.trigger as Extract<WorkerRow['trigger'], { kind: 'queue' }>;
    const mod = (await import(pathToFileURL(join(repoRoot, row.handler)).href)) as { handler?: QueueHandler };
    if (typeof mod.handler !== 'function') throw new Error(`${row.handler} exports no handler`);
    const handler = mod.handler;
    const inFlight = new Set<Promise<void>>();
    while (!stopped) {
      // Configuration, read where it is used: never a value taken before the platform set it.
      const queueUrl = config.queueUrl(trigger.queue);
      const free = concurrency - inFlight.size;
      if (paused || free < trigger.batchSize) {
        await Promise.race([...inFlight, sleep(pollMs)]);
        continue;
      }
      let messages: Message[] = [];
      try {
        const reply = await sqs().send(
          new ReceiveMessageCommand({
            QueueUrl: queueUrl,
            MaxNumberOfMessages: Math.min(10, Math.floor(free / trigger.batchSize) * trigger.batchSize),
            WaitTimeSeconds: waitSeconds,
            MessageSystemAttributeNames: ['All'],
          }),
        );
        messages = reply.Messages ?? [];
      } catch (error) {
        if (stopped) break;
        logger.error('queue driver receive failed', { worker: row.name, error: (error as Error).message });
        await sleep(pollMs * 10);
        continue;
      }
      if (messages.length > 0 && (stopped || paused)) {
        await release(queueUrl, messages, row.name);
        continue;
      }
      if (messages.length === 0) {
        if (waitSeconds === 0) await sleep(pollMs);
        continue;
      }
      for (let i = 0; i < messages.length; i += trigger.batchSize) {
        const batch = messages.slice(i, i + trigger.batchSize);
        const call = (async () => {
          let failed = new Set(batch.map((m) => m.MessageId!));
          try {
            const reply = await handler({ Records: batch.map((m) => toRecord(m, queueUrl)) });
            failed = new Set((reply?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
          } catch (error) {
            logger.error('queue worker failed', { worker: row.name, error: (error as Error).message });
          }
          if (stopped) return;
          await Promise.all(
            batch
              .filter((m) => !failed.has(m.MessageId!))
              .map((m) =>
                sqs()
                  .send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: m.ReceiptHandle! }))
                  .catch((error: unknown) => logger.warn('queue driver delete failed', { worker: row.name, error: (error as Error).message })),
              ),
          );
        })();
        inFlight.add(call);
        running.add(call);
        void call.finally(() => {
          inFlight.delete(call);
          running.delete(call);
        });
      }
    }
  }

  return {
    name: 'queues',
    start() {
      for (const row of rows) {
        loops.push(loop(row).catch((error: unknown) => logger.error('queue driver stopped', { worker: row.name, error: (error as Error).message })));
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
