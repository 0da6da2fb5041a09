/**
 * Data that really is open: a JSON object that came from outside (a webhook's payload, a provider's event, a
 * discovery document, an API answer, a manifest entry) and is read field by field, each field checked where it is
 * read. Items of the table are never this: each records module declares its item type.
 */
export type JsonObject = Record<string, unknown>;

/** A JSON object (not null, not an array): what a parsed payload must be before its fields are read. */
export const isJsonObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/** An answer made of the listed fields of an object and nothing else (an item's keys and secrets stay behind). */
export function pickFields<T extends object, K extends keyof T>(source: T, fields: readonly K[]): Pick<T, K> {
  const out = {} as Pick<T, K>;
  for (const field of fields) out[field] = source[field];
  return out;
}
