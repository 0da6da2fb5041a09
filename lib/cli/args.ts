import { parseArgs } from 'node:util';
import { ApiClient } from './api-client.ts';
import { CliError } from './operator-env.ts';
import { apiToken, apiUrl, readSettingsFile } from './settings.ts';

/** What the API commands share: their flags, parsed strictly, and a client from the saved settings. */
type Flags = Record<string, { type: 'string' | 'boolean' }>;

export function parse<T extends Flags>(args: string[], spec: T, positionals = 0) {
  try {
    const parsed = parseArgs({ args, options: spec, allowPositionals: positionals > 0, strict: true });
    if (parsed.positionals.length > positionals) throw new Error(`Unexpected argument ${parsed.positionals[positionals]}`);
    return {
      values: parsed.values as { [K in keyof T]?: T[K]['type'] extends 'boolean' ? boolean : string },
      positionals: parsed.positionals,
    };
  } catch (error) {
    throw new CliError((error as Error).message);
  }
}

export function client(): ApiClient {
  const settings = readSettingsFile();
  return new ApiClient(apiUrl(settings), apiToken(settings));
}
