import { randomBytes } from 'node:crypto';
import { startPlatformEnv } from '../../lib/config.ts';
import { inject } from 'vitest';
import { createApiKey, createSession } from '../../lib/identity/credential-records.ts';
import { createUser, type User } from '../../lib/users/user-records.ts';
import { putMembership } from '../../lib/teams/membership-records.ts';
import { createTeam, type Team } from '../../lib/teams/teams.ts';
import type { LocalDriver } from '../../lib/local/driver.ts';
import { startLocalPlatform, type LocalPlatform } from '../../lib/local/platform.ts';
import { localParts } from '../../lib/local/wiring.ts';
import { ensureSynthesized } from '../../local-cloud/template/assembly.ts';
import type { SynthesizedTemplate } from '../../local-cloud/template/template.ts';
import { recordPermissionUsage } from './synth-setup.ts';

export const DASHBOARD_ORIGIN = 'https://dashboard.slipway.test';

export interface ApiReply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface TestPlatform extends LocalPlatform {
  /** Calls the local API as the dashboard and CLI do, over HTTP. */
  api<T = any>(
    method: string,
    path: string,
    options?: { token?: string; body?: unknown; rawBody?: string | Buffer; headers?: Record<string, string> },
  ): Promise<ApiReply<T>>;
}

type PlatformOptions = {
  drivers?: (() => LocalDriver)[];
  ownAwsEndpoint?: boolean;
  alterTemplate?: (template: SynthesizedTemplate) => void;
  /**
   * Why this file needs a platform of its own rather than its worker's (a setting read at start, a restart,
   * platform-wide counts); unset, a file of a project that shares its workers uses the worker's platform.
   */
  own?: string;
};

/**
 * The platform of this worker, shared by the files it runs one after another (the source project sets
 * SLIPWAY_TEST_SHARED_PLATFORM and `isolate: false`): each file isolates itself by a team and project of its own,
 * and its `stop()` leaves the platform to the worker's next file.
 */
let shared: Promise<TestPlatform> | null = null;

/** Settings every test platform runs with, set again for each file (a file's changes are taken back after it). */
function testSettings(): void {
  process.env.CORS_ORIGINS = DASHBOARD_ORIGIN;
  // A browser per publish would slow every test; the screenshot test runs its capture driver itself.
  process.env.SCREENSHOT_CAPTURE ??= 'off';
  // Lets SSO discovery fetch the test identity providers served over http on 127.0.0.1.
  process.env.SSO_ALLOW_LOOPBACK_HTTP = 'true';
}

/**
 * The local platform of a test file: the worker's shared one, or (with options that change what runs, or `own`)
 * one of its own under a fresh prefix on the run's shared moto_server, the API on a free loopback port.
 */
export async function startTestPlatform(options: PlatformOptions = {}): Promise<TestPlatform> {
  testSettings();
  const needsOwn = options.drivers || options.ownAwsEndpoint || options.alterTemplate || options.own;
  if (needsOwn || process.env.SLIPWAY_TEST_SHARED_PLATFORM !== '1') return startPlatform(options);
  // Not the default of code outside its calls while no file holds it: a file that starts no platform, or one of
  // its own, never reaches the shared one's resources by accident.
  // A moto_server of the worker's own: one moto for every worker serialized them all on its DynamoDB lock and its one
  // interpreter (18 source files on 3 workers: 205 s with one shared moto, 155 s with one each, cores 21 % and 8 %
  // idle). Files with platforms of their own and the synthesized project stay on the run's moto.
  shared ??= startPlatform({ defaultOutsideCalls: false, ownAwsEndpoint: true });
  const platform = await shared;
  const release = startPlatformEnv(platform.platformEnv);
  // A file may retune one of the platform's own settings for its cases; the next file gets them as they were.
  const owned = { ...platform.env };
  return {
    ...platform,
    stop: async () => {
      release();
      for (const name of Object.keys(platform.env)) if (!(name in owned)) delete platform.env[name];
      Object.assign(platform.env, owned);
    },
  };
}

async function startPlatform(options: PlatformOptions & { defaultOutsideCalls?: boolean }): Promise<TestPlatform> {
  // The synthesized mode's project (vitest.config.ts) runs the same suites against cdk.out's template.
  const synthesized = process.env.SLIPWAY_PLATFORM_MODE === 'synth';
  // The run's setup started the synthesis without waiting for it (test/support/synth-setup.ts).
  if (synthesized) await ensureSynthesized();
  const parts = localParts({ synthesized });
  const platform = await startLocalPlatform({
    synthesized: synthesized ? { assemblyDir: inject('assemblyDir'), alterTemplate: options.alterTemplate } : undefined,
    port: 0,
    prefix: `t${randomBytes(5).toString('hex')}`,
    // A moto_server of its own for a file that reads moto's inspection API (sent mail), which serializes everything moto holds.
    awsEndpoint: options.ownAwsEndpoint ? undefined : inject('awsEndpoint'),
    hostnameHandlers: parts.hostnameHandlers,
    drivers: options.drivers ?? parts.drivers,
    defaultOutsideCalls: options.defaultOutsideCalls,
  });
  if (platform.synthesized) recordPermissionUsage(platform, inject('permissionUsageDir'));
  return asTestPlatform(platform);
}

/** A started platform with the test client of its API. */
export function asTestPlatform(platform: LocalPlatform): TestPlatform {
  return {
    ...platform,
    async api(method, path, { token, body, rawBody, headers = {} } = {}) {
      const init: RequestInit = { method, headers: { ...headers } };
      if (token) (init.headers as Record<string, string>).authorization = `Bearer ${token}`;
      if (body !== undefined) {
        (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
        init.body = JSON.stringify(body);
      } else if (rawBody !== undefined) {
        init.body = rawBody;
      }
      const res = await fetch(`${platform.baseUrl}${path}`, init);
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON: keep the text
      }
      return { status: res.status, headers: res.headers, body: parsed as any, text };
    },
  };
}

const unique = () => randomBytes(4).toString('hex');

export interface Actor {
  user: User | null;
  token: string;
}

/** A user with a session, as `admin create-user` makes one. */
export async function makeUser(options: { platformAdmin?: boolean; name?: string } = {}): Promise<Actor & { user: User }> {
  const user = await createUser({
    email: `u-${unique()}@example.test`,
    name: options.name ?? 'Test User',
    isPlatformAdmin: options.platformAdmin,
  });
  return { user, token: await createSession(user.user_id) };
}

/**
 * A team with one actor per role, an API key, an outsider who belongs to
 * another team, and a platform admin who is no member: the authorization matrix.
 */
export async function makeTeamWithRoles(name = `Team ${unique()}`): Promise<{
  team: Team;
  owner: Actor & { user: User };
  admin: Actor & { user: User };
  member: Actor & { user: User };
  apiKey: Actor;
  outsider: Actor & { user: User };
  otherTeam: Team;
  platformAdmin: Actor & { user: User };
}> {
  const owner = await makeUser({ name: 'Owner' });
  const team = await createTeam({ name, ownerUserId: owner.user.user_id });
  const admin = await makeUser({ name: 'Admin' });
  await putMembership(team.id, admin.user.user_id, 'admin');
  const member = await makeUser({ name: 'Member' });
  await putMembership(team.id, member.user.user_id, 'member');
  const outsider = await makeUser({ name: 'Outsider' });
  const otherTeam = await createTeam({ name: `Other ${unique()}`, ownerUserId: outsider.user.user_id });
  const platformAdmin = await makeUser({ platformAdmin: true, name: 'Platform Admin' });
  // Fresh sessions, opened after the memberships exist (default team set).
  const session = async (a: Actor & { user: User }) => ({ ...a, token: await createSession(a.user.user_id) });
  return {
    team,
    owner: await session(owner),
    admin: await session(admin),
    member: await session(member),
    apiKey: { user: null, token: await createApiKey(team.id) },
    outsider: await session(outsider),
    otherTeam,
    platformAdmin,
  };
}
