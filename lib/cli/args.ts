import { parseArgs } from 'node:util';
import { ApiClient } from './api-client.ts';
import { UsageError } from './operator-env.ts';
import { apiToken, apiUrl, readSettingsFile } from './settings.ts';
import { cliConfig } from './config.ts';

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
    throw new UsageError((error as Error).message);
  }
}

/**
 * Whether to draw progress (a bar, a spinner): only for a person at a terminal.
 * Not when either output is piped or redirected, nor when NO_COLOR
 * (no-color.org) or CI is set, nor on a dumb terminal: there, plain lines.
 */
export function interactive(stream: NodeJS.WriteStream = process.stderr): boolean {
  return Boolean(stream.isTTY && process.stdout.isTTY) && !cliConfig.plainOutput();
}

export function client(): ApiClient {
  const settings = readSettingsFile();
  return new ApiClient(apiUrl(settings), apiToken(settings));
}
