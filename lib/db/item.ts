import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';

/**
 * Typed items over lib-dynamodb. ElectroDB and dynamodb-toolbox were measured too large for the
 * handler bundles; this is the part of them the records modules need: each declares its item type
 * once (keys, index keys, attributes) and reads come back as that type. DynamoDB checks no shape, so
 * the type is the records module's word for what its own writes store, not a validation.
 */

/** The table's primary key: every item has it. (Type aliases, not interfaces: an item stays assignable to an open record.) */
export type TableKey = {
  pk: string;
  sk: string;
};

/** The keys of the table's two general indexes, present on the items an index lists. */
export type IndexKeys = {
  gsi1pk?: string;
  gsi1sk?: string;
  gsi2pk?: string;
  gsi2sk?: string;
};

/** A stored item: its attributes `T`, the table key and whichever index keys it carries. */
export type Stored<T> = T & TableKey & IndexKeys;

/** The item under `key`, as the records module that writes it declares it; null when there is none. */
export async function getItem<T extends object>(key: TableKey, consistent = false, projection?: string): Promise<T | null> {
  const reply = await dynamo().send(
    new GetCommand({
      TableName: config.tableName(),
      Key: key,
      ConsistentRead: consistent,
      ...(projection ? { ProjectionExpression: projection } : {}),
    }),
  );
  return (reply.Item as T | undefined) ?? null;
}

/**
 * An expression's values (`:name` → value) or the fields a write sets: open by nature, since each
 * caller names its own. Not an item: a read comes back as the records module's item type.
 */
export type ExpressionValues = Record<string, unknown>;

/**
 * Where a paged read resumes: the LastEvaluatedKey DynamoDB answered with, given back as ExclusiveStartKey. It holds
 * the table key, and the index's keys on an index read.
 */
export type PageKey = TableKey & IndexKeys;

/** A page's LastEvaluatedKey, as the PageKey it is (the SDK types it as an open map). */
export const pageKey = (lastEvaluatedKey: Record<string, unknown> | undefined): PageKey | undefined =>
  lastEvaluatedKey as PageKey | undefined;
