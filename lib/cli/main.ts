#!/usr/bin/env node
import { functionCommands, functionUsage, projectOf } from './functions.ts';
import { buildCommands } from './builds.ts';
import { ApiCallError } from './api-client.ts';
import { detailLines } from './error-details.ts';
import { CliError, UsageError } from './operator-env.ts';
import { siteCommands, siteUsage } from './sites.ts';
import { devCommands } from './dev-command.ts';
import { gitCommands } from './git.ts';

/**
 * `slipway`: the user commands (against the API) and the operator commands
 * (against the table). Exit codes scripts can rely on: 0 success, 1 the
 * operation failed (the API refused, the network failed, an invoked function
 * failed), 2 the command line is wrong (unknown command, bad or missing
 * argument); `--help` on any command prints its usage and exits 0.
 */

const builds = buildCommands(projectOf);

const exitCodes = `Exit codes: 0 success, 1 the operation failed, 2 usage error (unknown command, bad or missing argument).`;

const adminUsage = `  admin status [--json] [--peek]
  admin redrive --queue NAME
  admin create-user --email E [--name N] [--platform-admin]
  admin create-team --name N --owner USER_ID
  admin add-member --team T --user U --role admin|member
  admin create-api-key --team T [--role admin|member]
  admin create-session --user U [--team T]
  admin set-plan --team T --plan free|pro|team
  admin set-subscription --team T --plan free|pro|team --status active|trialing|past_due|unpaid|incomplete|incomplete_expired|canceled [--cancel-at-period-end] [--created-at ISO]
  admin backfill-attention
  admin suspend-team --team T [--off]
  admin enroll-functions --team T [--off]
  admin publish-notice --key K --title T [--body B] [--publish-at ISO] [--expires-at ISO] [--min-role R]
  admin create-invitation --team T --email E [--role admin|member] [--expires-at ISO] [--accepted]
  admin create-feedback --team T --user U --message M [--type T] [--page-route R] [--app-version V] [--user-agent UA] [--viewport WxH]
  admin create-email-change --user U --new-email E [--status pending|confirmed|frozen] [--request-ip IP] [--request-user-agent UA]
  admin create-credential-cutoff --user U --reason R [--not-before ISO]
  admin create-step-up-grant --user U --factors F[,F...] [--minutes N]`;

const usage = `Usage: slipway <command> [options]    (slipway <command> --help for one command)

Commands (against the API; token from SLIPWAY_TOKEN or "slipway login"):
${siteUsage}
${functionUsage}
${Object.values(builds)
  .map((c) => `  ${c.usage}`)
  .join('\n')}

Git builds on this machine (docs/builds.md, "Your first Git build"):
  ${gitCommands.git!.usage}

On this machine, no account needed:
  ${devCommands.dev!.usage}

Operator commands (against the running local platform, or TABLE_NAME); they print JSON:
${adminUsage}

--json prints the result as JSON on stdout; on failure stdout stays empty and stderr says why.
Progress goes to stderr: a bar only at a terminal, plain lines when piped or NO_COLOR/CI is set.
${exitCodes}
`;

/** What each command does, for `slipway <command> --help`. */
const descriptions: Record<string, string> = {
  deploy:
    'Publishes the folder DIR (default: the current folder) as a new deployment and makes it live. Only files the\n' +
    'platform lacks are sent; file hashes are cached per folder (see docs/cli.md), so a repeat deploy reads only\n' +
    'changed files. A folder deployed before publishes to the same project unless --project, --name or --subdomain say\n' +
    'otherwise. --json prints the deployment summary (ids, url, counts, timings, live functions).',
  rollback: 'Makes the deployment before the live one (or --to DEPLOYMENT_ID) live again. --json prints the project.',
  projects: "Lists the team's projects. --json prints them as an array.",
  login: 'Checks a token (a session token or an API key) against the API and saves it with the API address.',
  functions:
    "Lists a project's live functions, their URLs, schedules (UTC) and next runs (functions or functions list). --json prints\n" +
    'them as an array. functions run NAME runs the function now (team admins): a queued invocation with trigger manual,\n' +
    'with --data as its body (as invoke sends it); --wait polls it to the end (exit 1 if it failed).',
  invoke:
    'Queues a call of function NAME through the public queued door; --wait polls it to the end (exit 1 if it failed).\n' +
    '--data TEXT is the request body, sent as application/json when it parses as JSON and as text/plain otherwise;\n' +
    '--data @FILE sends the file (application/json for a .json file, else application/octet-stream).\n' +
    '--poll INVOCATION_ID polls a call already queued (the one a call without --wait printed) instead of queueing one.',
  logs:
    "Prints an invocation's console output, or with --build a build's log; --follow follows a running build until it ends\n" +
    '(exit 1 unless it ended ready). --json prints the lines as an array. logs NAME --follow is the live tail of function\n' +
    'NAME: the console lines, errors, status and duration of its HTTPS calls made while it runs, until Ctrl-C (nothing of\n' +
    'them is stored; --json prints one event per line).',
  build: "Starts a build of BRANCH (its head, or --commit SHA) from the project's repository; --follow prints its log until it ends.",
  'auto-deploy': 'auto-deploy resume clears the failure breaker of the project (auto-deploy builds pushes again).',
  dev:
    'Serves the folder DIR (default: the current folder) and its functions/ on this machine as they would be served once\n' +
    "deployed: the same serving rules, build, sandboxed runner, door rules and limits. Prints the site's and each\n" +
    "function's local URL; a saved file is served at once and a function rebuilt when its source changes. No account.",
  git:
    "git serve serves the repository DIR (default: the current one) read-only over Git's smart HTTP on\n" +
    '127.0.0.1:9400 (SLIPWAY_GIT_PORT), where builds of the local platform fetch it. git hook install connects a\n' +
    'project to it (--name makes a new one, with auto-deploy on), makes its webhook secret and writes the hook\n' +
    '(post-commit; post-receive in a bare repository) that sends the platform a signed push webhook.',
  admin: 'Operator commands: they write the table directly (the running local platform, or TABLE_NAME and AWS credentials).',
};

const commands = { ...siteCommands, ...functionCommands, ...devCommands, ...builds, ...gitCommands };

function commandHelp(name: string): string | null {
  if (name === 'admin') return `Usage:\n${adminUsage}\n\n${descriptions.admin}\n${exitCodes}\n`;
  const command = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!command) return null;
  return `Usage: slipway ${command.usage}\n\n${descriptions[name] ?? ''}\n${exitCodes}\n`;
}

const wantsHelp = (args: string[]) => {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h');
};

async function main(argv: string[]): Promise<number> {
  const [group, ...rest] = argv;
  if (!group) {
    process.stderr.write(usage);
    return 2;
  }
  if (group === 'help' || group === '--help' || group === '-h') {
    if (rest[0]) {
      const help = commandHelp(rest[0]);
      if (!help) throw new UsageError(`Unknown command ${rest[0]}. Run slipway help for the list.`);
      process.stdout.write(help);
    } else process.stdout.write(usage);
    return 0;
  }
  if (wantsHelp(rest)) {
    const help = commandHelp(group);
    if (!help) throw new UsageError(`Unknown command ${group}. Run slipway help for the list.`);
    process.stdout.write(help);
    return 0;
  }
  if (group === 'admin') {
    // Loaded on demand: the operator commands bring the table client and the domain code, which no user command needs.
    const { PrintedText, runAdmin } = await import('./admin.ts');
    const result = await runAdmin(rest);
    process.stdout.write(result instanceof PrintedText ? result.text : `${JSON.stringify(result, null, 2)}\n`);
    return 0;
  }
  const command = Object.hasOwn(commands, group) ? commands[group] : undefined;
  if (command) return command.run(rest);
  throw new UsageError(`Unknown command ${group}. Run slipway help for the list.`);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    const usageError = error instanceof UsageError || String((error as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS');
    if (error instanceof CliError) process.stderr.write(`slipway: ${error.message}\n`);
    else process.stderr.write(`slipway: ${(error as Error).name}: ${(error as Error).message}\n`);
    // The details say what the sentence cannot: which file, which field, the build's own log line by line.
    if (error instanceof ApiCallError) for (const line of detailLines(error.details)) process.stderr.write(`  ${line}\n`);
    process.exit(usageError ? 2 : 1);
  },
);
