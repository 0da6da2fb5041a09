import { QueryCommand, type QueryCommandInput, type QueryCommandOutput } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { type PageKey, pageKey } from './item.ts';

/** Every item a query matches, following LastEvaluatedKey across pages, as the caller's records module declares them. */
export async function queryAll<T extends object>(input: Omit<QueryCommandInput, 'ExclusiveStartKey'>): Promise<T[]> {
  const items: T[] = [];
  let startKey: PageKey | undefined;
  do {
    const page = await dynamo().send(new QueryCommand({ ...input, ExclusiveStartKey: startKey }));
    items.push(...((page.Items ?? []) as T[]));
    startKey = pageKey(page.LastEvaluatedKey);
  } while (startKey);
  return items;
}

/**
 * One numbered page of an index partition in index order (`newestFirst` reverses it), as the API's
 * page/page_size listings answer: `total` is a COUNT query of the partition; the page is read by
 * walking the partition to offset `(page - 1) * pageSize`, so a deep page costs its offset in reads.
 */
export async function readIndexPage<T extends object>(input: {
  tableName: string;
  indexName: string;
  partition: { name: string; value: string };
  page: number;
  pageSize: number;
  newestFirst?: boolean;
}): Promise<{ total: number; items: T[] }> {
  const base = {
    TableName: input.tableName,
    IndexName: input.indexName,
    KeyConditionExpression: '#pk = :pk',
    ExpressionAttributeNames: { '#pk': input.partition.name },
    ExpressionAttributeValues: { ':pk': input.partition.value },
  };
  let total = 0;
  let start: PageKey | undefined;
  do {
    const counted = await dynamo().send(new QueryCommand({ ...base, Select: 'COUNT', ExclusiveStartKey: start }));
    total += counted.Count ?? 0;
    start = pageKey(counted.LastEvaluatedKey);
  } while (start);
  const offset = (input.page - 1) * input.pageSize;
  const wanted = offset + input.pageSize;
  const items: T[] = [];
  start = undefined;
  if (offset < total) {
    do {
      const read: QueryCommandOutput = await dynamo().send(
        new QueryCommand({ ...base, ScanIndexForward: !input.newestFirst, Limit: wanted - items.length, ExclusiveStartKey: start }),
      );
      items.push(...((read.Items ?? []) as T[]));
      start = pageKey(read.LastEvaluatedKey);
    } while (start && items.length < wanted);
  }
  return { total, items: items.slice(offset, wanted) };
}
