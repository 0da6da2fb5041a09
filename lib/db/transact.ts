import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { cancellationCodes, isTransactionCanceled } from './errors.ts';

type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];
type WithoutTable<T> = T extends { TableName?: unknown } ? Omit<T, 'TableName'> : T;

/** One write of a transaction, as a records module describes it: the table is the platform's. */
export type Write =
  | { Put: WithoutTable<NonNullable<TransactItem['Put']>> }
  | { Update: WithoutTable<NonNullable<TransactItem['Update']>> }
  | { Delete: WithoutTable<NonNullable<TransactItem['Delete']>> }
  | { ConditionCheck: WithoutTable<NonNullable<TransactItem['ConditionCheck']>> };

/**
 * A write with a name the caller reads a cancellation by, and (optionally) the domain error its
 * condition failing means. Names, not positions: a transaction assembled from several records
 * modules keeps its meaning when one of them adds an item.
 */
export interface NamedWrite {
  name: string;
  write: Write;
  refusal?: () => Error;
}

/**
 * A cancelled transaction whose failed conditions name no refusal (or which a racing transaction
 * cancelled): `failed` holds the names of the writes whose condition did not hold.
 */
export class TransactionRefused extends Error {
  readonly failed: ReadonlySet<string>;
  /** Whether a racing transaction on the same items cancelled it (worth another try when nothing failed). */
  readonly conflicted: boolean;
  constructor(failed: ReadonlySet<string>, conflicted: boolean, cause: unknown) {
    super(`transaction cancelled${failed.size > 0 ? `: ${[...failed].join(', ')} failed` : ''}`, { cause });
    this.name = 'TransactionRefused';
    this.failed = failed;
    this.conflicted = conflicted;
  }
}

/** A write with its table named: the form a TransactWriteItems request takes. */
function withTable(write: Write): TransactItem {
  const [kind, body] = Object.entries(write)[0] as [string, object];
  return { [kind]: { TableName: config.tableName(), ...body } } as TransactItem;
}

/**
 * Writes every item or none. When DynamoDB cancels it, the first write (in the order given) whose
 * condition failed and which names a refusal throws that refusal; otherwise TransactionRefused
 * says which conditions failed.
 */
export async function transact(writes: NamedWrite[]): Promise<void> {
  try {
    await dynamo().send(new TransactWriteCommand({ TransactItems: writes.map((w) => withTable(w.write)) }));
  } catch (error) {
    if (!isTransactionCanceled(error)) throw error;
    const codes = cancellationCodes(error);
    const failed = writes.filter((_, i) => codes[i] === 'ConditionalCheckFailed');
    const refused = failed.find((w) => w.refusal);
    if (refused?.refusal) throw refused.refusal();
    throw new TransactionRefused(new Set(failed.map((w) => w.name)), codes.includes('TransactionConflict'), error);
  }
}

/** Whether an error is a cancelled transaction in which the write named `name` failed its condition. */
export function refusedAt(error: unknown, name: string): boolean {
  return error instanceof TransactionRefused && error.failed.has(name);
}

/**
 * Transaction items another module built whole (with their table): named `prefix` and their position,
 * so a cancellation reads them like any other write.
 */
export function namedWrites(prefix: string, items: readonly object[]): NamedWrite[] {
  return items.map((item, i) => ({ name: `${prefix}${i}`, write: item as Write }));
}
