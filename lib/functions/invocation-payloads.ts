import { getObject, putObject } from '../aws/s3-lite.ts';
import { config } from '../config.ts';

/**
 * Where a queued invocation's request, result and console output are kept: in its record when small,
 * else as objects under `invocations/{team_id}/{id}/` in the bundles bucket. Both go after the same 7 days
 * (the record by its TTL, the objects by the bucket's lifecycle rule) and both with the project.
 *
 * Small is the common case, and then nothing waits on an object: the worker's claim returns the request
 * with the record, and a poll reads the result with it. On this machine that is four calls fewer per
 * invocation (two writes and two reads of objects). The bound keeps a function's listing whole: it reads
 * up to 50 records from an index that holds every attribute, and DynamoDB reads at most 1 MB a page.
 */
export const INLINE_PART_MAX_BYTES = 4096;

export type InvocationPart = 'request' | 'result' | 'console';

/** The record's attribute holding a part inline: its JSON text. */
export const inlineAttribute = (part: InvocationPart) => `${part}_json` as const;

export interface StoredRequest {
  method: string;
  query: string;
  headers: [string, string][];
  /** base64 */
  body: string;
}

export interface StoredResult {
  status: number;
  headers: Record<string, string>;
  /** base64 */
  body: string;
}

type Owner = { team_id: string; id: string };

export const objectKey = (record: Owner, part: InvocationPart) => `invocations/${record.team_id}/${record.id}/${part}.json`;

/** A part's JSON text, and whether it is small enough for the record (else storeObject keeps it). */
export function partJson(value: unknown): { json: string; inline: boolean } {
  const json = JSON.stringify(value);
  return { json, inline: Buffer.byteLength(json) <= INLINE_PART_MAX_BYTES };
}

export async function storeObject(record: Owner, part: InvocationPart, json: string): Promise<void> {
  await putObject({ bucket: config.bucket('bundles'), key: objectKey(record, part), body: json, contentType: 'application/json' });
}

export async function getJson<T>(key: string): Promise<T | null> {
  try {
    return JSON.parse(await (await getObject(config.bucket('bundles'), key)).transformToString()) as T;
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'NoSuchKey' || name === 'NotFound') return null;
    throw error;
  }
}

/**
 * Keeps a part: its JSON text when it is small enough for the record (the caller writes it there), else
 * stored as its object first (and null returned).
 */
export async function storePart(record: Owner, part: InvocationPart, value: unknown): Promise<string | null> {
  const { json, inline } = partJson(value);
  if (inline) return json;
  await storeObject(record, part, json);
  return null;
}

/** A part, from the record when it holds it, else from its object; null when gone. */
export async function loadPart<T>(
  record: Owner & Partial<Record<`${InvocationPart}_json`, string>>,
  part: InvocationPart,
): Promise<T | null> {
  const inline = record[inlineAttribute(part)];
  if (typeof inline === 'string') return JSON.parse(inline) as T;
  return getJson<T>(objectKey(record, part));
}
