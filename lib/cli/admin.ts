import { parseArgs } from 'node:util';
import { createApiKey, createSession } from '../identity/credentials.ts';
import { createUser, EmailTakenError, getUser } from '../identity/users.ts';
import { putMembership } from '../teams/memberships.ts';
import { createTeam, resolveTeam } from '../teams/teams.ts';
import { CliError, loadOperatorEnvironment } from './operator-env.ts';

type Command = (args: string[]) => Promise<unknown>;

function options<T extends Record<string, { type: 'string' | 'boolean' }>>(args: string[], spec: T) {
  try {
    return parseArgs({ args, options: spec, allowPositionals: false, strict: true }).values as {
      [K in keyof T]?: T[K]['type'] extends 'boolean' ? boolean : string;
    };
  } catch (error) {
    throw new CliError((error as Error).message);
  }
}

function need(value: string | undefined, flag: string): string {
  if (!value) throw new CliError(`${flag} is required`);
  return value;
}

async function teamId(idOrSlug: string): Promise<string> {
  const resolved = await resolveTeam(idOrSlug);
  if (!resolved) throw new CliError(`No team ${idOrSlug}`);
  return resolved.team.id;
}

async function userId(id: string): Promise<string> {
  if (!(await getUser(id))) throw new CliError(`No user ${id}`);
  return id;
}

export const adminCommands: Record<string, { usage: string; run: Command }> = {
  'create-user': {
    usage: 'admin create-user --email E [--name N] [--platform-admin]',
    run: async (args) => {
      const o = options(args, { email: { type: 'string' }, name: { type: 'string' }, 'platform-admin': { type: 'boolean' } });
      const email = need(o.email, '--email');
      if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) throw new CliError(`--email ${email} is not an e-mail address`);
      try {
        const user = await createUser({ email, name: o.name ?? null, isPlatformAdmin: o['platform-admin'] ?? false });
        const sessionToken = await createSession(user.user_id);
        return { user_id: user.user_id, email: user.email, is_platform_admin: user.is_platform_admin, session_token: sessionToken };
      } catch (error) {
        if (error instanceof EmailTakenError) throw new CliError(error.message);
        throw error;
      }
    },
  },
  'create-team': {
    usage: 'admin create-team --name N --owner USER_ID',
    run: async (args) => {
      const o = options(args, { name: { type: 'string' }, owner: { type: 'string' } });
      const name = need(o.name, '--name');
      if (name.length > 255) throw new CliError('--name is at most 255 characters');
      const team = await createTeam({ name, ownerUserId: await userId(need(o.owner, '--owner')) });
      return { team_id: team.id, name: team.name, slug: team.slug, owner: o.owner };
    },
  },
  'add-member': {
    usage: 'admin add-member --team T --user U --role admin|member',
    run: async (args) => {
      const o = options(args, { team: { type: 'string' }, user: { type: 'string' }, role: { type: 'string' } });
      const role = need(o.role, '--role');
      if (role !== 'admin' && role !== 'member') throw new CliError('--role is admin or member (ownership moves by transfer)');
      const membership = await putMembership(await teamId(need(o.team, '--team')), await userId(need(o.user, '--user')), role);
      return { team_id: membership.team_id, user_id: membership.user_id, role: membership.role };
    },
  },
  'create-api-key': {
    usage: 'admin create-api-key --team T [--role admin|member]',
    run: async (args) => {
      const o = options(args, { team: { type: 'string' }, role: { type: 'string' } });
      const role = o.role ?? 'admin';
      if (role !== 'admin' && role !== 'member') throw new CliError('--role is admin or member');
      const id = await teamId(need(o.team, '--team'));
      return { team_id: id, role, api_key: await createApiKey(id, role) };
    },
  },
  'create-session': {
    usage: 'admin create-session --user U [--team T]',
    run: async (args) => {
      const o = options(args, { user: { type: 'string' }, team: { type: 'string' } });
      const user = await userId(need(o.user, '--user'));
      const team = o.team ? await teamId(o.team) : null;
      return { user_id: user, team_id: team, session_token: await createSession(user, team) };
    },
  },
};

export async function runAdmin(args: string[]): Promise<unknown> {
  const [name, ...rest] = args;
  const command = name ? adminCommands[name] : undefined;
  if (!command) {
    throw new CliError(`Unknown admin command ${name ?? ''}. Commands:\n${Object.values(adminCommands).map((c) => `  ${c.usage}`).join('\n')}`);
  }
  loadOperatorEnvironment();
  return command.run(rest);
}
