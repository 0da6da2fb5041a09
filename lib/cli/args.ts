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
    if (parsed.positionals.length > positionals)
      throw Object.assign(new Error(`Unexpected argument '${parsed.positionals[positionals]}'`), {
        code: 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL',
      });
    return {
      values: parsed.values as { [K in keyof T]?: T[K]['type'] extends 'boolean' ? boolean : string },
      positionals: parsed.positionals,
    };
  } catch (error) {
    throw new UsageError(parseErrorSentence(error as Error & { code?: string }));
  }
}

/** Node's parseArgs errors in the CLI's own words (its sentences suggest `--` quoting, which no flag here needs). */
export function parseErrorSentence(error: Error & { code?: string }): string {
  const option = /'(-[^' ]*)/.exec(error.message)?.[1];
  if (error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && option) return `There is no ${option} flag. ${helpHint()}`;
  if (error.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && option)
    return /argument missing/.test(error.message) ? `${option} needs a value. ${helpHint()}` : `${option} takes no value. ${helpHint()}`;
  if (error.code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
    const argument = /'([^']*)'/.exec(error.message)?.[1];
    return `Unexpected argument${argument ? ` ${argument}` : ''}. ${helpHint()}`;
  }
  return error.message;
}

/** Where the flags of the command being run are listed. */
function helpHint(): string {
  const command = process.argv[2];
  return command && !command.startsWith('-') ? `Run slipway ${command} --help for its flags.` : 'Run slipway help for the commands.';
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
