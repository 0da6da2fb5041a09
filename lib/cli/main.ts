import { runAdmin } from './admin.ts';
import { CliError } from './operator-env.ts';

const usage = `Usage: slipway <command>

Operator commands (against the running local platform, or TABLE_NAME):
  admin create-user --email E [--name N] [--platform-admin]
  admin create-team --name N --owner USER_ID
  admin add-member --team T --user U --role admin|member
  admin create-api-key --team T [--role admin|member]
  admin create-session --user U [--team T]
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
  throw new CliError(`Unknown command ${group}.\n\n${usage}`);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof CliError) process.stderr.write(`slipway: ${error.message}\n`);
    else process.stderr.write(`slipway: ${(error as Error).name}: ${(error as Error).message}\n`);
    process.exit(1);
  },
);
