import { parseArgs } from 'node:util';
import { createApiKey, createSession } from '../identity/credential-records.ts';
import { createUser, EmailTakenError, getUser } from '../users/user-records.ts';
import { putMembership } from '../teams/membership-records.ts';
import { createTeam, resolveTeam } from '../teams/teams.ts';
import { isPlanName, plans } from '../plans.ts';
import { backfillTeamAttention } from '../attention/backfill.ts';
import { backfillDeploymentsIndex } from '../deployments/backfill-index.ts';
import { SUBSCRIPTION_STATUSES, setTeamSubscription, type SubscriptionStatus } from '../attention/team-state.ts';
import { setFunctionsEnrolment, setTeamPlan, setTeamSuspended } from '../teams/standing.ts';
import { NoticeKeyTakenError, NOTICE_KEY_PATTERN, publishNotice } from '../notices/notices.ts';
import { createEmailChange, createFeedback, createInvitation, createStepUpGrant, setCredentialCutoff } from '../privacy/records.ts';
import { CliError, loadOperatorEnvironment } from './operator-env.ts';
import { formatStatus, platformStatus, queueNamed, redriveDeadLetters } from './admin-status.ts';

/** What an admin command prints as it is, instead of as JSON (a human-readable status; --json asks for the JSON). */
export class PrintedText {
  constructor(readonly text: string) {}
}

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
  status: {
    usage: 'admin status [--json] [--peek]',
    run: async (args) => {
      const o = options(args, { json: { type: 'boolean' }, peek: { type: 'boolean' } });
      const status = await platformStatus({ peek: o.peek ?? false });
      return o.json ? status : new PrintedText(formatStatus(status));
    },
  },
  redrive: {
    usage: 'admin redrive --queue NAME',
    run: async (args) => {
      const o = options(args, { queue: { type: 'string' } });
      return redriveDeadLetters(queueNamed(o.queue));
    },
  },
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

  // Sites: plans and suspension (lib/plans.ts, docs/sites.md)
  'set-plan': {
    usage: `admin set-plan --team T --plan ${Object.keys(plans).join('|')}`,
    run: async (args) => {
      const o = options(args, { team: { type: 'string' }, plan: { type: 'string' } });
      const plan = need(o.plan, '--plan');
      if (!isPlanName(plan)) throw new CliError(`--plan is one of ${Object.keys(plans).join(', ')}`);
      return setTeamPlan(await teamId(need(o.team, '--team')), plan);
    },
  },
  'set-subscription': {
    usage: `admin set-subscription --team T --plan ${Object.keys(plans).join('|')} --status ${SUBSCRIPTION_STATUSES.join('|')} [--cancel-at-period-end] [--created-at ISO]`,
    run: async (args) => {
      const o = options(args, {
        team: { type: 'string' },
        plan: { type: 'string' },
        status: { type: 'string' },
        'cancel-at-period-end': { type: 'boolean' },
        'created-at': { type: 'string' },
      });
      const plan = need(o.plan, '--plan');
      if (!isPlanName(plan)) throw new CliError(`--plan is one of ${Object.keys(plans).join(', ')}`);
      const status = need(o.status, '--status');
      if (!(SUBSCRIPTION_STATUSES as readonly string[]).includes(status))
        throw new CliError(`--status is one of ${SUBSCRIPTION_STATUSES.join(', ')}`);
      const createdAt = o['created-at'];
      if (createdAt !== undefined && Number.isNaN(Date.parse(createdAt))) throw new CliError('--created-at is an ISO 8601 time');
      return setTeamSubscription(await teamId(need(o.team, '--team')), {
        plan,
        status: status as SubscriptionStatus,
        cancel_at_period_end: o['cancel-at-period-end'] === true,
        created_at: createdAt === undefined ? undefined : new Date(createdAt).toISOString(),
      });
    },
  },
  'backfill-attention': {
    usage: 'admin backfill-attention',
    run: async (args) => {
      options(args, {});
      return backfillTeamAttention();
    },
  },
  'backfill-deployments-index': {
    usage: 'admin backfill-deployments-index',
    run: async (args) => {
      options(args, {});
      return backfillDeploymentsIndex();
    },
  },
  'suspend-team': {
    usage: 'admin suspend-team --team T [--off]',
    run: async (args) => {
      const o = options(args, { team: { type: 'string' }, off: { type: 'boolean' } });
      return setTeamSuspended(await teamId(need(o.team, '--team')), !o.off);
    },
  },
  'enroll-functions': {
    usage: 'admin enroll-functions --team T [--off]',
    run: async (args) => {
      const o = options(args, { team: { type: 'string' }, off: { type: 'boolean' } });
      return setFunctionsEnrolment(await teamId(need(o.team, '--team')), !o.off);
    },
  },

  // Accounts: the notice catalogue and the personal-data records the export reads
  'publish-notice': {
    usage: 'admin publish-notice --key K --title T [--body B] [--publish-at ISO] [--expires-at ISO] [--min-role member|admin|owner]',
    run: async (args) => {
      const o = options(args, {
        key: { type: 'string' },
        title: { type: 'string' },
        body: { type: 'string' },
        'publish-at': { type: 'string' },
        'expires-at': { type: 'string' },
        'min-role': { type: 'string' },
      });
      const key = need(o.key, '--key');
      if (!NOTICE_KEY_PATTERN.test(key)) throw new CliError('--key is 1 to 128 lowercase letters, digits, dots, hyphens and underscores');
      const publishedAt = o['publish-at'] ? instant(o['publish-at'], '--publish-at') : undefined;
      const expiresAt = o['expires-at'] ? instant(o['expires-at'], '--expires-at') : null;
      if (expiresAt && expiresAt <= (publishedAt ?? new Date())) throw new CliError('--expires-at must be after the publish time');
      const minRole = o['min-role'] ?? null;
      if (minRole !== null && minRole !== 'member' && minRole !== 'admin' && minRole !== 'owner') {
        throw new CliError('--min-role is member, admin or owner');
      }
      try {
        return await publishNotice({ key, title: need(o.title, '--title'), body: o.body ?? null, publishedAt, expiresAt, minRole });
      } catch (error) {
        if (error instanceof NoticeKeyTakenError) throw new CliError(error.message);
        throw error;
      }
    },
  },
  'create-invitation': {
    usage: 'admin create-invitation --team T --email E [--role admin|member] [--expires-at ISO] [--accepted]',
    run: async (args) => {
      const o = options(args, {
        team: { type: 'string' },
        email: { type: 'string' },
        role: { type: 'string' },
        'expires-at': { type: 'string' },
        accepted: { type: 'boolean' },
      });
      const role = o.role ?? 'member';
      if (role !== 'admin' && role !== 'member') throw new CliError('--role is admin or member');
      return createInvitation({
        teamId: await teamId(need(o.team, '--team')),
        email: need(o.email, '--email'),
        role,
        expiresAt: o['expires-at'] ? instant(o['expires-at'], '--expires-at') : undefined,
        acceptedAt: o.accepted ? new Date() : null,
      });
    },
  },
  'create-feedback': {
    usage:
      'admin create-feedback --team T --user U --message M [--type T] [--page-route R] [--app-version V] [--user-agent UA] [--viewport WxH]',
    run: async (args) => {
      const o = options(args, {
        team: { type: 'string' },
        user: { type: 'string' },
        message: { type: 'string' },
        type: { type: 'string' },
        'page-route': { type: 'string' },
        'app-version': { type: 'string' },
        'user-agent': { type: 'string' },
        viewport: { type: 'string' },
      });
      const user = await getUser(need(o.user, '--user'));
      if (!user) throw new CliError(`No user ${o.user}`);
      return createFeedback({
        teamId: await teamId(need(o.team, '--team')),
        userId: user.user_id,
        userEmail: user.email,
        message: need(o.message, '--message'),
        type: o.type,
        pageRoute: o['page-route'],
        appVersion: o['app-version'],
        userAgent: o['user-agent'],
        viewport: o.viewport,
      });
    },
  },
  'create-email-change': {
    usage:
      'admin create-email-change --user U --new-email E [--status pending|confirmed|frozen] [--request-ip IP] [--request-user-agent UA]',
    run: async (args) => {
      const o = options(args, {
        user: { type: 'string' },
        'new-email': { type: 'string' },
        status: { type: 'string' },
        'request-ip': { type: 'string' },
        'request-user-agent': { type: 'string' },
      });
      const user = await getUser(need(o.user, '--user'));
      if (!user) throw new CliError(`No user ${o.user}`);
      const status = o.status ?? 'pending';
      if (status !== 'pending' && status !== 'confirmed' && status !== 'frozen')
        throw new CliError('--status is pending, confirmed or frozen');
      return createEmailChange({
        userId: user.user_id,
        oldEmail: user.email,
        newEmail: need(o['new-email'], '--new-email'),
        status,
        requestIp: o['request-ip'],
        requestUserAgent: o['request-user-agent'],
      });
    },
  },
  'create-credential-cutoff': {
    usage: 'admin create-credential-cutoff --user U --reason R [--not-before ISO]',
    run: async (args) => {
      const o = options(args, { user: { type: 'string' }, reason: { type: 'string' }, 'not-before': { type: 'string' } });
      return setCredentialCutoff({
        userId: await userId(need(o.user, '--user')),
        reason: need(o.reason, '--reason'),
        notBefore: o['not-before'] ? instant(o['not-before'], '--not-before') : undefined,
      });
    },
  },
  'create-step-up-grant': {
    usage: 'admin create-step-up-grant --user U --factors F[,F...] [--minutes N]',
    run: async (args) => {
      const o = options(args, { user: { type: 'string' }, factors: { type: 'string' }, minutes: { type: 'string' } });
      const factors = need(o.factors, '--factors')
        .split(',')
        .map((f) => f.trim())
        .filter(Boolean);
      const minutes = o.minutes === undefined ? undefined : Number(o.minutes);
      if (minutes !== undefined && !(Number.isInteger(minutes) && minutes > 0)) throw new CliError('--minutes is a positive whole number');
      return createStepUpGrant({ userId: await userId(need(o.user, '--user')), factors, minutes });
    },
  },
};

function instant(value: string, flag: string): Date {
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw new CliError(`${flag} ${value} is not an ISO 8601 timestamp`);
  return date;
}

export async function runAdmin(args: string[]): Promise<unknown> {
  const [name, ...rest] = args;
  const command = name ? adminCommands[name] : undefined;
  if (!command) {
    throw new CliError(
      `Unknown admin command ${name ?? ''}. Commands:\n${Object.values(adminCommands)
        .map((c) => `  ${c.usage}`)
        .join('\n')}`,
    );
  }
  loadOperatorEnvironment();
  return command.run(rest);
}
