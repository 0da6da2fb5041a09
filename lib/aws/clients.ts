import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '../config.ts';
import { countTableWrites } from './table-writes.ts';

/**
 * SDK clients are created once per container, lazily, on first use, and
 * keyed by endpoint so the local platform can repoint them between test files.
 * Each service has its own module (s3.ts, sqs.ts ...) so a handler bundles only
 * the SDK clients it imports.
 */
const cache = new Map<string, unknown>();

export interface ClientOptions {
  region: string;
  endpoint?: string;
  /** Local endpoints serve S3 on one host, so buckets go in the path. */
  forcePathStyle?: boolean;
}

export function lazyClient<T>(
  name: string,
  create: (opts: ClientOptions) => T,
  endpointOf: () => string | undefined = config.awsEndpoint,
): () => T {
  return () => {
    const endpoint = endpointOf();
    const key = `${name}|${endpoint ?? ''}|${config.awsRegion()}`;
    let client = cache.get(key) as T | undefined;
    if (!client) {
      client = create({ region: config.awsRegion(), ...(endpoint ? { endpoint, forcePathStyle: true } : {}) });
      cache.set(key, client);
    }
    return client;
  };
}

export const dynamo = /* @__PURE__ */ lazyClient('dynamodb', (opts) => {
  const client = new DynamoDBClient({ region: opts.region, endpoint: opts.endpoint });
  client.middlewareStack.add(countTableWrites as never, { step: 'initialize', name: 'countTableWrites' });
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
});
