/**
 * A count of the table writes this process has made (each write moves it
 * twice: when sent and when answered). A value read from the table while the
 * count stood still cannot have been changed by this process since: the site
 * server's record cache (lib/sites/serving-cache.ts) relies on it where every
 * write it must see is made by the same process (the local platform).
 */
let generation = 0;

export function tableWriteGeneration(): number {
  return generation;
}

/** DynamoDB operations that never write; every other one counts as a write. */
const READS = new Set([
  'GetItemCommand',
  'BatchGetItemCommand',
  'QueryCommand',
  'ScanCommand',
  'TransactGetItemsCommand',
  'DescribeTableCommand',
]);

type Next = (args: unknown) => Promise<unknown>;

/** SDK middleware (initialize step) of the table client that moves the count around each write. */
export const countTableWrites = (next: Next, context: { commandName?: string }) => async (args: unknown) => {
  if (READS.has(context.commandName ?? '')) return next(args);
  generation++;
  try {
    return await next(args);
  } finally {
    generation++;
  }
};
