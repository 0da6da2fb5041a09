import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { logger } from './logger.ts';
import type { LogFields } from './logger.ts';

/** What a queue worker does with the messages of its queue (lib/workers.ts). */
export interface QueueMessages<M> {
  /** The queue's name in log lines: `builds`, `invocations`. */
  queue: string;
  /**
   * The message a record's JSON body holds, or what it lacks (`without a build`): such a record is logged and
   * dropped, never delivered again, since a redelivery would hold the same body.
   */
  read: (body: unknown) => { message: M } | { lacks: string };
  /** Handles one message; `again` has the queue deliver it again, as a thrown error does. */
  handle: (message: M) => Promise<'done' | 'again'>;
  /** The log line of a message whose handling threw, and the fields that name the message in it. */
  failure: (message: M) => [line: string, fields: LogFields];
}

/**
 * Handles one batch of an SQS event, its messages side by side, and answers those to deliver again as batch
 * item failures (the event source mapping reports them, infra/workers.ts): a failed message never brings back
 * the ones that were handled, and the local platform's queue driver reads the same answer.
 */
export async function handleQueueBatch<M>(event: SQSEvent, messages: QueueMessages<M>): Promise<SQSBatchResponse> {
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  await Promise.all(
    event.Records.map(async (record) => {
      const read = readRecord(record.body, messages);
      if ('lacks' in read) {
        logger.warn(`${messages.queue} queue: a message ${read.lacks} was dropped`, { message_id: record.messageId });
        return;
      }
      try {
        if ((await messages.handle(read.message)) === 'again') failures.push({ itemIdentifier: record.messageId });
      } catch (error) {
        const [line, fields] = messages.failure(read.message);
        logger.error(line, { ...fields, error: (error as Error).message });
        failures.push({ itemIdentifier: record.messageId });
      }
    }),
  );
  return { batchItemFailures: failures };
}

function readRecord<M>(body: string, messages: QueueMessages<M>): { message: M } | { lacks: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { lacks: 'that is not JSON' };
  }
  return messages.read(parsed);
}
