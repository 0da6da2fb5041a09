import type { SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { handleQueueBatch, type QueueMessages } from '../../lib/queue-batch.ts';

const batch = (...bodies: string[]): SQSEvent =>
  ({ Records: bodies.map((body, i) => ({ messageId: `m${i}`, body })) }) as unknown as SQSEvent;

const messages = (handle: QueueMessages<string>['handle']): QueueMessages<string> => ({
  queue: 'test',
  read: (body) => {
    const id = (body as { id?: unknown } | null)?.id;
    return typeof id === 'string' ? { message: id } : { lacks: 'without an id' };
  },
  handle,
  failure: (id) => ['test worker failed', { id }],
});

describe('one batch of a queue', () => {
  it('reports a message whose handling threw or asked to come again, and drops one with no message in it', async () => {
    const handled: string[] = [];
    const answer = await handleQueueBatch(
      batch('{"id":"ok"}', 'not json', '{"id":"throws"}', 'null', '{"id":"again"}', '{"other":1}'),
      messages(async (id) => {
        handled.push(id);
        if (id === 'throws') throw new Error('table unavailable');
        return id === 'again' ? 'again' : 'done';
      }),
    );
    expect(handled.sort()).toEqual(['again', 'ok', 'throws']);
    expect(answer.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(['m2', 'm4']);
  });

  it('handles the messages side by side, not one after the other', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const started: string[] = [];
    const answer = handleQueueBatch(
      batch('{"id":"a"}', '{"id":"b"}'),
      messages(async (id) => {
        started.push(id);
        // a waits for b to start: one after the other, the batch would never end
        if (id === 'a') await gate;
        else release();
        return 'done';
      }),
    );
    await expect(answer).resolves.toEqual({ batchItemFailures: [] });
    expect(started).toEqual(['a', 'b']);
  });
});
