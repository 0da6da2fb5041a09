/**
 * Recognising the refusals of conditional writes and transactions, which is
 * how uniqueness, counters, single-use tokens and state transitions report
 * that another request got there first.
 */
type Cancelled = { CancellationReasons?: { Code?: string }[] };

/** A single conditional write whose condition did not hold. */
export function isConditionalCheckFailure(error: unknown): boolean {
  return (error as Error)?.name === 'ConditionalCheckFailedException';
}

/** A TransactWriteItems that DynamoDB cancelled: a condition failed, or a racing transaction conflicted. */
export function isTransactionCanceled(error: unknown): boolean {
  return (error as Error)?.name === 'TransactionCanceledException';
}

/** The cancellation code of each item of a cancelled transaction, in request order. */
export function cancellationCodes(error: unknown): (string | undefined)[] {
  return ((error as Cancelled)?.CancellationReasons ?? []).map((reason) => reason?.Code);
}

/** Whether item `index` of a cancelled transaction failed its condition. */
export function conditionFailedAt(error: unknown, index: number): boolean {
  return cancellationCodes(error)[index] === 'ConditionalCheckFailed';
}

/**
 * The item as it was when a conditional write was refused (the write asked ReturnValuesOnConditionCheckFailure
 * ALL_OLD), as the records module that wrote it declares it; undefined when there was none.
 */
export function refusedItem<T extends object>(error: unknown): T | undefined {
  return (error as { Item?: T })?.Item;
}
