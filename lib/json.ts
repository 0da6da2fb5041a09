/**
 * Data that really is open: a JSON object that came from outside (a webhook's payload, a provider's event, a
 * discovery document, an API answer, a manifest entry) and is read field by field, each field checked where it is
 * read. Items of the table are never this: each records module declares its item type.
 */
export type JsonObject = Record<string, unknown>;

/** A JSON object (not null, not an array): what a parsed payload must be before its fields are read. */
export const isJsonObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);
