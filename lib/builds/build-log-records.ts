import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { epochSeconds, keys } from '../db/keys.ts';
import { type PageKey, pageKey } from '../db/item.ts';

/**
 * A build's log lines, in chunk items of BUILD_LOG_CHUNK_LINES lines under
 * the build's own partition (a deployment item holds at most 400 KB; a log of
 * thousands of lines does not fit one). Line n is in chunk floor(n / size).
 * One worker at a time follows a build and appends; readers page by line
 * number, the cursor of `GET .../deployments/{id}/log`.
 */
export const BUILD_LOG_CHUNK_LINES = 100;
/** Longest line kept; a longer one is cut (a minified bundle printed whole). */
export const MAX_LOG_LINE_CHARS = 2000;
/** A build's log outlives the build's own records for a year at most. */
const LOG_RETENTION_SECONDS = 365 * 24 * 3600;

/** Appends lines from line number `from` on (the number of lines already stored). */
export async function appendLogLines(deploymentId: string, from: number, lines: string[]): Promise<void> {
  const ttl = epochSeconds(new Date()) + LOG_RETENTION_SECONDS;
  let index = from;
  let rest = lines.map((line) => (line.length > MAX_LOG_LINE_CHARS ? `${line.slice(0, MAX_LOG_LINE_CHARS)}…` : line));
  while (rest.length > 0) {
    const seq = Math.floor(index / BUILD_LOG_CHUNK_LINES);
    const room = BUILD_LOG_CHUNK_LINES - (index % BUILD_LOG_CHUNK_LINES);
    const part = rest.slice(0, room);
    await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.buildLogChunk(deploymentId, seq),
        UpdateExpression: 'SET #lines = list_append(if_not_exists(#lines, :empty), :part), #type = :type, #ttl = :ttl',
        ExpressionAttributeNames: { '#lines': 'lines', '#type': 'type', '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':empty': [], ':part': part, ':type': 'build_log_chunk', ':ttl': ttl },
      }),
    );
    index += part.length;
    rest = rest.slice(part.length);
  }
}

/** Lines from `cursor` on, at most `limit`. */
export async function readLogLines(deploymentId: string, cursor: number, limit: number): Promise<string[]> {
  const first = Math.floor(cursor / BUILD_LOG_CHUNK_LINES);
  const lines: string[] = [];
  let startKey: PageKey | undefined;
  do {
    const reply = await dynamo().send(
      new QueryCommand({
        TableName: config.tableName(),
        KeyConditionExpression: 'pk = :pk AND sk >= :first',
        ExpressionAttributeValues: { ':pk': keys.buildLogChunk(deploymentId, 0).pk, ':first': keys.buildLogChunk(deploymentId, first).sk },
        ExclusiveStartKey: startKey,
        Limit: Math.ceil(limit / BUILD_LOG_CHUNK_LINES) + 1,
      }),
    );
    for (const item of reply.Items ?? []) {
      const seq = Number(String(item.sk).slice('CHUNK#'.length));
      const chunk = (item.lines as string[] | undefined) ?? [];
      const skip = Math.max(0, cursor - seq * BUILD_LOG_CHUNK_LINES);
      lines.push(...chunk.slice(skip));
    }
    startKey = lines.length < limit ? pageKey(reply.LastEvaluatedKey) : undefined;
  } while (startKey);
  return lines.slice(0, limit);
}
