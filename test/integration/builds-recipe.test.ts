import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { repoRoot } from '../../lib/local/api-server.ts';
import { getSite, staticSite, useBuildsSuite, waitForBuild } from '../support/builds.ts';
import { cliEntry, runCli, runProgram } from '../support/cli.ts';

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
    writeFileSync(shim, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(cliEntry())} "$@"\n`);
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

describe('slipway git hook install in a bare repository', () => {
  it('connects an existing project, writes a post-receive that sends each pushed branch, and never replaces a hook of its own', async () => {
    const work = mkdtempSync(join(tmpdir(), 'slipway-bare-'));
    const bare = join(work, 'shop.git');
    const clone = join(work, 'clone');
    const gitEnv = {
      ...process.env,
      GIT_AUTHOR_NAME: 'T',
      GIT_AUTHOR_EMAIL: 't@example.test',
      GIT_COMMITTER_NAME: 'T',
      GIT_COMMITTER_EMAIL: 't@example.test',
    };
    const git = (cwd: string, ...args: string[]) => {
      const out = spawnSync('git', args, { cwd, env: gitEnv, encoding: 'utf8' });
      if (out.status !== 0) throw new Error(`git ${args.join(' ')}: ${out.stderr}`);
      return out.stdout.trim();
    };
    const port = String(await freePort());
    const env = { SLIPWAY_API_URL: ctx.platform.baseUrl, SLIPWAY_TOKEN: ctx.roles.admin.token, SLIPWAY_GIT_PORT: port, HOME: work };
    const served = spawn(process.execPath, [cliEntry(), 'git', 'serve', bare], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: 'ignore',
    });
    try {
      git(work, 'init', '-q', '--bare', '-b', 'main', bare);
      const created = await ctx.platform.api('POST', '/api/v1/projects', {
        token: ctx.roles.admin.token,
        body: { name: 'Shop', build_command: 'npm run build', output_dir: 'dist' },
      });
      expect(created.body.data.auto_deploy_enabled).toBe(false);
      const foreign = join(bare, 'hooks', 'post-receive');
      writeFileSync(foreign, '#!/bin/sh\necho mine\n');
      const refused = await runCli(['git', 'hook', 'install', bare, '--project', created.body.data.id], env);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toBe(
        `slipway: ${foreign} exists and was not written by slipway; move it away or pass --force to replace it.\n`,
      );
      rmSync(foreign);

      const installed = await runCli(['git', 'hook', 'install', bare, '--project', created.body.data.id], env);
      expect(installed.code, installed.stderr).toBe(0);
      expect(installed.stdout.split('\n')[0]).toBe(
        `Project Shop (${created.body.data.id}) builds http://127.0.0.1:${port}/shop.git; auto-deploy is on.`,
      );
      git(work, 'clone', '-q', bare, clone);
      for (const [path, content] of Object.entries(staticSite('pushed'))) writeFileSync(join(clone, path), content);
      git(clone, 'add', '-A');
      git(clone, 'commit', '-q', '-m', 'Pushed page');
      // Asynchronously: the hook calls the platform, which answers from this process.
      const push = await runProgram('git', ['push', '-q', 'origin', 'HEAD:refs/heads/main'], gitEnv as Record<string, string>, {
        cwd: clone,
      });
      expect(push.code, push.stderr).toBe(0);
      // The hook's lines reach the pusher as the forge's "remote:" lines.
      const queued = /remote: slipway: build ([0-9a-f-]{36}) queued for main \(production\)/.exec(push.stderr);
      expect(queued, push.stderr).not.toBeNull();
      const build = await waitForBuild(ctx.platform, ctx.roles.member.token, created.body.data.id, queued![1]!);
      expect(build.status, build.build_log.join('\n')).toBe('ready');
      expect(build.commit_sha).toBe(git(clone, 'rev-parse', 'HEAD'));
    } finally {
      served.kill();
      rmSync(work, { recursive: true, force: true });
    }
  });
});
