import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { repoRoot } from '../../lib/local/api-server.ts';
import { getSite, useBuildsSuite, waitForBuild } from '../support/builds.ts';

/**
 * The first Git build on one machine (docs/builds.md, "Your first Git build"): the doc's block of commands,
 * read from the doc and run as it is by a shell (`slipway` on the PATH is this checkout's CLI), goes live;
 * and a project created with a repository has auto-deploy on unless the request says otherwise.
 */
// The recipe runs a real build: seconds, more on a loaded machine.
vi.setConfig({ testTimeout: 120_000 });
const ctx = useBuildsSuite();

/** The first `sh` block of the doc's "Your first Git build" section. */
function recipe(): string {
  const doc = readFileSync(join(repoRoot, 'docs/builds.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Your first Git build'));
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error('docs/builds.md has no sh block under "Your first Git build"');
  return block[1]!;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('auto-deploy on create', () => {
  it('is on for a project created with a repository, unless the request turns it off; off without one', async () => {
    const create = async (body: Record<string, unknown>) => {
      const reply = await ctx.platform.api('POST', '/api/v1/projects', {
        token: ctx.roles.admin.token,
        body: { name: `Auto ${Math.random().toString(36).slice(2, 8)}`, ...body },
      });
      expect(reply.status, reply.text).toBe(201);
      return reply.body.data.auto_deploy_enabled;
    };
    expect(await create({ git_repo_url: ctx.repo.url })).toBe(true);
    expect(await create({ git_repo_url: ctx.repo.url, auto_deploy_enabled: false })).toBe(false);
    expect(await create({})).toBe(false);
  });
});

describe('the recipe of docs/builds.md', () => {
  it("runs as written: a local repository, slipway git serve, the hook, and a commit's build live", async () => {
    const work = mkdtempSync(join(tmpdir(), 'slipway-recipe-'));
    const bin = join(work, 'bin');
    const home = join(work, 'home');
    const shim = join(bin, 'slipway');
    // `slipway` as installed, from this checkout's source.
    for (const dir of [bin, home]) mkdirSync(dir);
    writeFileSync(
      shim,
      `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} --import ${JSON.stringify(import.meta.resolve('tsx'))} ${JSON.stringify(join(repoRoot, 'lib/cli/main.ts'))} "$@"\n`,
    );
    chmodSync(shim, 0o755);
    const script = join(work, 'recipe.sh');
    writeFileSync(script, `set -e\n${recipe()}`);
    const env = {
      PATH: `${bin}:${process.env.PATH}`,
      HOME: home,
      XDG_CONFIG_HOME: join(home, '.config'),
      XDG_STATE_HOME: join(home, '.state'),
      SLIPWAY_API_URL: ctx.platform.baseUrl,
      SLIPWAY_TOKEN: ctx.roles.admin.token,
      SLIPWAY_GIT_PORT: String(await freePort()),
      GIT_AUTHOR_NAME: 'Recipe',
      GIT_AUTHOR_EMAIL: 'recipe@example.test',
      GIT_COMMITTER_NAME: 'Recipe',
      GIT_COMMITTER_EMAIL: 'recipe@example.test',
    };
    // Its own process group: `slipway git serve &` stays up after the script (the build fetches from it) and goes with the group.
    const shell = spawn('bash', [script], { cwd: work, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    for (const stream of [shell.stdout, shell.stderr]) stream.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      const code = await new Promise<number | null>((resolve) => shell.on('exit', resolve));
      expect(code, output).toBe(0);
      expect(output).toMatch(/Project hello-git \([0-9a-f-]{36}\) builds http:\/\/127\.0\.0\.1:\d+\/hello-git; auto-deploy is on\./);
      const queued = /slipway: build ([0-9a-f-]{36}) queued for main \(production\); follow it: slipway logs --build \1 --follow/.exec(
        output,
      );
      expect(queued, output).not.toBeNull();
      const projects = await ctx.platform.api('GET', '/api/v1/projects', { token: ctx.roles.admin.token });
      const project = projects.body.data.projects.find((p: { name: string }) => p.name === 'hello-git');
      expect(project.auto_deploy_enabled).toBe(true);
      const build = await waitForBuild(ctx.platform, ctx.roles.member.token, project.id, queued![1]!);
      expect(build.status, build.build_log.join('\n')).toBe('ready');
      expect(build.commit_message).toBe('Go live');
      expect(await getSite(ctx.platform, `${project.subdomain}.localhost`)).toEqual({ status: 200, text: '<h1>Hello from Git</h1>\n' });
    } finally {
      try {
        process.kill(-shell.pid!, 'SIGTERM');
      } catch {
        // The group has ended.
      }
      rmSync(work, { recursive: true, force: true });
    }
  });
});
