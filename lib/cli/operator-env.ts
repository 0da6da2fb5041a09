import { readLocalState, stateFilePath } from '../local/state.ts';
import { cliConfig, supplyOperatorEnvironment } from './config.ts';

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
  if (cliConfig.operatorTable()) return;
  const state = readLocalState();
  if (!state) {
    throw new CliError(
      `No running local platform found (${stateFilePath()} is missing). Start it with \`npm run dev\`, ` +
        'or set TABLE_NAME and AWS credentials to work against a deployment.',
    );
  }
  supplyOperatorEnvironment(state.env);
}
