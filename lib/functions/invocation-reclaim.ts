import { queryAll } from '../db/query.ts';
import { config } from '../config.ts';
import { keys } from '../db/keys.ts';
import { OPEN_INVOCATION_SHARDS, type InvocationRecord } from './invocation-records.ts';
import { INVOCATION_ERRORS, finishInvocation, sendInvocationMessage } from './invocations.ts';

/** What a restarted platform does with the invocations a stopped one left open (lib/local/queued-runtime.ts). */

/** Invocations still pending or running (what a restarted platform reclaims): every shard, and the partition of before sharding. */
export async function listOpenInvocations(): Promise<InvocationRecord[]> {
  const shards = Array.from({ length: OPEN_INVOCATION_SHARDS }, (_, shard) => keys.openInvocation(shard, '', '').gsi2pk);
  const partitions = [...shards, keys.openInvocationsUnsharded().gsi2pk];
  const pages = await Promise.all(
    partitions.map((partition) =>
      // The partition lists invocations, and other kinds of items the filter below leaves out.
      queryAll<{ type: string }>({
        TableName: config.tableName(),
        IndexName: 'gsi2',
        KeyConditionExpression: 'gsi2pk = :pk',
        ExpressionAttributeValues: { ':pk': partition },
      }),
    ),
  );
  return pages.flat().filter((item): item is InvocationRecord & { type: 'invocation' } => item.type === 'invocation');
}

/**
 * Ends what a platform that died left open: a pending invocation as failed
 * ("never started"), a running one as timed_out ("did not finish before its
 * timeout"). Each is a conditional write from the state it was read in, so a
 * worker that is in fact alive keeps what it wrote. Returns how many it ended.
 */
export async function reclaimOpenInvocations(filter: (record: InvocationRecord) => boolean = () => true): Promise<number> {
  let ended = 0;
  for (const record of await listOpenInvocations()) {
    if (!filter(record)) continue;
    const running = record.status === 'running';
    const done = await finishInvocation(
      record,
      running
        ? {
            status: 'timed_out',
            error_message: INVOCATION_ERRORS.reclaimedRunning,
            result: { status: 504, headers: {}, body: '' },
            console: [],
          }
        : {
            status: 'failed',
            error_message: INVOCATION_ERRORS.reclaimedPending,
            result: { status: 500, headers: {}, body: '' },
            console: [],
          },
      running ? 'running' : 'pending',
    );
    if (done) ended++;
  }
  return ended;
}

/**
 * Sends the message of every pending invocation again, so that each one a stopped platform left
 * waiting runs after the start, whether or not the queue kept its message: the worker's claim is a
 * conditional write, so the one of two messages that comes second does nothing. Returns how many.
 */
export async function requeuePendingInvocations(): Promise<number> {
  let sent = 0;
  for (const record of await listOpenInvocations()) {
    if (record.status !== 'pending') continue;
    await sendInvocationMessage(record.id);
    sent++;
  }
  return sent;
}
