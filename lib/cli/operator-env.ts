import { readLocalState, stateFilePath } from '../local/state.ts';

export class CliError extends Error {}

/** A command line the CLI cannot run (unknown command, bad flag, missing argument): exit code 2, not 1. */
export class UsageError extends CliError {}

/**
 * Operator commands talk to the table directly. Against a deployment they use
 * TABLE_NAME and the usual AWS credentials; with no TABLE_NAME they use the
 * running local platform's state file, so `npm run slipway -- admin ...` works
 * next to `npm run dev` with no flags.
 */
export function loadOperatorEnvironment(): void {
  if (process.env.TABLE_NAME) return;
  const state = readLocalState();
  if (!state) {
    throw new CliError(
      `No running local platform found (${stateFilePath()} is missing). Start it with \`npm run dev\`, ` +
        'or set TABLE_NAME and AWS credentials to work against a deployment.',
    );
  }
  process.env.AWS_REGION ??= 'us-east-1';
  process.env.AWS_ACCESS_KEY_ID ??= 'test';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'test';
  // The state file wins over empty variables, so nothing talks to a real AWS endpoint by accident.
  for (const [name, value] of Object.entries(state.env)) if (!process.env[name]) process.env[name] = value;
}
