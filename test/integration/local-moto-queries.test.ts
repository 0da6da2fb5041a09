import { randomBytes } from 'node:crypto';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  BatchWriteCommand,
  DeleteCommand,
  DynamoDBDocumentClient,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';

/**
 * The local moto_server answers a Query of an index from the items noted under the queried value
 * (lib/local/moto-python/sitecustomize.py, `_index_partitions`) rather than by sorting the whole table. These cases
 * hold it to DynamoDB's answer wherever an item's index value is made or changed: a put, an update in place, a
 * delete, a batch, a cancelled transaction's undo; and its order and pages.
 */
const table = `moto-queries-${randomBytes(4).toString('hex')}`;
const db = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: inject('awsEndpoint') }));

async function byIndex(value: string, options: { forward?: boolean; limit?: number } = {}): Promise<string[]> {
  const found: string[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.send(
      new QueryCommand({
        TableName: table,
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :v',
        ExpressionAttributeValues: { ':v': value },
        ScanIndexForward: options.forward ?? true,
        Limit: options.limit,
        ExclusiveStartKey: start,
      }),
    );
    found.push(...(page.Items ?? []).map((item) => `${item.pk}/${item.sk}`));
    start = page.LastEvaluatedKey;
  } while (start);
  return found;
}

const put = (pk: string, sk: string, gsi1pk?: string, gsi1sk = sk) =>
  db.send(new PutCommand({ TableName: table, Item: { pk, sk, ...(gsi1pk ? { gsi1pk, gsi1sk } : {}) } }));

const update = (pk: string, expression: string, values?: Record<string, string>) =>
  db.send(
    new UpdateCommand({ TableName: table, Key: { pk, sk: 'item' }, UpdateExpression: expression, ExpressionAttributeValues: values }),
  );

beforeAll(async () => {
  await db.send(
    new CreateTableCommand({
      TableName: table,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: ['pk', 'sk', 'gsi1pk', 'gsi1sk'].map((name) => ({ AttributeName: name, AttributeType: 'S' })),
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: [
        {
          IndexName: 'gsi1',
          KeySchema: [
            { AttributeName: 'gsi1pk', KeyType: 'HASH' },
            { AttributeName: 'gsi1sk', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    }),
  );
  // Items under other values and items with no index key: none of them is ever part of an answer below.
  await Promise.all(Array.from({ length: 40 }, (_, i) => put(`other#${i}`, 'x', i % 2 ? `elsewhere#${i % 5}` : undefined)));
});

describe('the local moto: Query of an index', () => {
  it('lists exactly the items whose index key is the value, in index order, forward and back, page by page', async () => {
    await put('a#3', 'item', 'team#1', '03');
    await put('a#1', 'item', 'team#1', '01');
    await put('a#2', 'item', 'team#1', '02');
    await put('a#9', 'item', 'team#2', '01');
    expect(await byIndex('team#1')).toEqual(['a#1/item', 'a#2/item', 'a#3/item']);
    expect(await byIndex('team#1', { forward: false })).toEqual(['a#3/item', 'a#2/item', 'a#1/item']);
    expect(await byIndex('team#1', { limit: 2 })).toEqual(['a#1/item', 'a#2/item', 'a#3/item']);
    expect(await byIndex('team#none')).toEqual([]);
  });

  it('follows an item that an update moves to another value, or out of the index, and one a put replaces or a delete removes', async () => {
    await put('b#1', 'item', 'team#3');
    await put('b#2', 'item', 'team#3');
    expect(await byIndex('team#3')).toEqual(['b#1/item', 'b#2/item']);
    await update('b#1', 'SET gsi1pk = :v', { ':v': 'team#4' });
    expect(await byIndex('team#3')).toEqual(['b#2/item']);
    expect(await byIndex('team#4')).toEqual(['b#1/item']);
    // An update that makes a new item, and one that takes the index key away.
    await update('b#3', 'SET gsi1pk = :v, gsi1sk = :s', { ':v': 'team#4', ':s': 'zz' });
    await update('b#1', 'REMOVE gsi1pk');
    expect(await byIndex('team#4')).toEqual(['b#3/item']);
    // Back under its first value; then a put that replaces it elsewhere; then a delete.
    await update('b#1', 'SET gsi1pk = :v', { ':v': 'team#3' });
    expect(await byIndex('team#3')).toEqual(['b#1/item', 'b#2/item']);
    await put('b#2', 'item', 'team#4', 'aa');
    await db.send(new DeleteCommand({ TableName: table, Key: { pk: 'b#1', sk: 'item' } }));
    expect(await byIndex('team#3')).toEqual([]);
    expect(await byIndex('team#4')).toEqual(['b#2/item', 'b#3/item']);
  });

  it('keeps what a batch writes, and what a cancelled transaction puts back', async () => {
    await db.send(
      new BatchWriteCommand({
        RequestItems: {
          [table]: [
            { PutRequest: { Item: { pk: 'c#1', sk: 'item', gsi1pk: 'team#5', gsi1sk: '1' } } },
            { PutRequest: { Item: { pk: 'c#2', sk: 'item', gsi1pk: 'team#5', gsi1sk: '2' } } },
          ],
        },
      }),
    );
    expect(await byIndex('team#5')).toEqual(['c#1/item', 'c#2/item']);
    // The update moves c#1 away, then the condition on c#2 fails: the transaction is cancelled and c#1 is back.
    const cancelled = db.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: table,
              Key: { pk: 'c#1', sk: 'item' },
              UpdateExpression: 'SET gsi1pk = :v',
              ExpressionAttributeValues: { ':v': 'team#6' },
            },
          },
          { ConditionCheck: { TableName: table, Key: { pk: 'c#2', sk: 'item' }, ConditionExpression: 'attribute_not_exists(pk)' } },
        ],
      }),
    );
    await expect(cancelled).rejects.toMatchObject({ name: 'TransactionCanceledException' });
    expect(await byIndex('team#5')).toEqual(['c#1/item', 'c#2/item']);
    expect(await byIndex('team#6')).toEqual([]);
  });
});
