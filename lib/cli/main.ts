import { runAdmin } from './admin.ts';
import { functionCommands, functionUsage } from './functions.ts';
import { ApiCallError } from './api-client.ts';
import { CliError } from './operator-env.ts';
import { siteCommands, siteUsage } from './sites.ts';

const usage = `Usage: slipway <command>

Commands (against the API; token from SLIPWAY_TOKEN or "slipway login"):
${siteUsage}
${functionUsage}

Operator commands (against the running local platform, or TABLE_NAME):
  admin create-user --email E [--name N] [--platform-admin]
  admin create-team --name N --owner USER_ID
  admin add-member --team T --user U --role admin|member
  admin create-api-key --team T [--role admin|member]
  admin create-session --user U [--team T]
  admin set-plan --team T --plan free|pro|team
  admin suspend-team --team T [--off]
  admin enroll-functions --team T [--off]
  admin publish-notice --key K --title T [--body B] [--publish-at ISO] [--expires-at ISO] [--min-role R]
  admin create-invitation --team T --email E [--role admin|member] [--expires-at ISO] [--accepted]
  admin create-feedback --team T --user U --message M [--type T] [--page-route R] [--app-version V] [--user-agent UA] [--viewport WxH]
  admin create-email-change --user U --new-email E [--status pending|confirmed|frozen] [--request-ip IP] [--request-user-agent UA]
  admin create-credential-cutoff --user U --reason R [--not-before ISO]
  admin create-step-up-grant --user U --factors F[,F...] [--minutes N]
`;

async function main(argv: string[]): Promise<number> {
  const [group, ...rest] = argv;
  if (!group || group === 'help' || group === '--help') {
    process.stdout.write(usage);
    return group ? 0 : 2;
  }
  if (group === 'admin') {
    const result = await runAdmin(rest);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  }
  const siteCommand = Object.hasOwn(siteCommands, group) ? siteCommands[group] : undefined;
  if (siteCommand) return siteCommand.run(rest);
  const functionCommand = Object.hasOwn(functionCommands, group) ? functionCommands[group] : undefined;
  if (functionCommand) return functionCommand.run(rest);
  throw new CliError(`Unknown command ${group}.\n\n${usage}`);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof CliError) process.stderr.write(`slipway: ${error.message}\n`);
    else process.stderr.write(`slipway: ${(error as Error).name}: ${(error as Error).message}\n`);
    // A failed functions build says why in its log: show it, line by line, as the build wrote it.
    const buildLog = error instanceof ApiCallError ? (error.details as { build_log?: unknown } | null)?.build_log : undefined;
    if (Array.isArray(buildLog)) for (const line of buildLog) process.stderr.write(`  ${String(line)}\n`);
    process.exit(1);
  },
);
