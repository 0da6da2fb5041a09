import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { probeSandbox } from '../../lib/sandbox/capabilities.ts';
import { createGitProject, PLAIN_BUILD, plainStaticSite, staticSite, useBuildsSuite, waitForBuild } from '../support/builds.ts';
import { githubPushPayload, gitlabPushPayload, sendGithub, sendGitlab } from '../support/webhooks.ts';

/**
 * Issue 39, through the builds the other builds tests run (a repository served by `git http-backend` on
 * loopback, real webhooks, the local sandbox): the build egress refuses every IPv6 form that embeds a
 * refused IPv4 address (403 from the proxy), the platform never reads a host file through a symbolic
 * link of the repository, a build sees its own processes only and no path of the platform in /proc,
 * the fetch line shows the whole ref, and a replayed delivery builds nothing.
 */
vi.setConfig({ testTimeout: 180_000 });
const ctx = useBuildsSuite();
const sandboxed = probeSandbox().isolation === 'bwrap';

/** A host file, outside the repository and the sandbox, that a repository's link names. */
const hostDir = mkdtempSync(join(tmpdir(), 'slipway-host-secret-'));
const hostFile = join(hostDir, 'secrets.json');
writeFileSync(hostFile, JSON.stringify({ ENV_ENCRYPTION_KEY: 'host-secret-value-0123456789' }));
afterAll(() => rmSync(hostDir, { recursive: true, force: true }));

/** A site whose build script runs `body` (an async function body with `log`), then writes dist/index.html. */
function scriptedSite(label: string, body: string): Record<string, string> {
  return staticSite(label, {
    'build.mjs': [
      "import { mkdirSync, writeFileSync } from 'node:fs';",
      'const log = (line) => console.log(line);',
      `await (async () => {\n${body}\n})();`,
      "mkdirSync('dist', { recursive: true });",
      `writeFileSync('dist/index.html', '<h1>${label}</h1>');`,
    ].join('\n'),
  });
}

async function pushAndWait(secret: string, projectId: string, branch: string, files: Record<string, string | null | { symlink: string }>) {
  const sha = ctx.repo.commit(branch, files);
  const reply = await ctx.push(secret, branch, sha);
  expect(reply.status, reply.text).toBe(202);
  const queued = reply.body.data.builds.find((b: { project_id: string }) => b.project_id === projectId);
  return waitForBuild(ctx.platform, ctx.roles.member.token, projectId, queued.deployment_id);
}

const project = (settings: Record<string, unknown> = {}) =>
  createGitProject(ctx.platform, ctx.roles.admin.token, {
    git_repo_url: ctx.repo.url,
    build_command: 'npm run build',
    output_dir: 'dist',
    ...settings,
  });
/** A project whose builds run no install (plainStaticSite): for what the fetch and the webhooks decide, not npm. */
const plainProject = (settings: Record<string, unknown> = {}) => project({ ...PLAIN_BUILD, ...settings });

describe('build egress: IPv6 forms that embed a refused IPv4 address', () => {
  it.skipIf(!sandboxed)("answers the build's CONNECT to each one 403, never trying the connection", async () => {
    const targets = [
      '[::7f00:1]:443', // IPv4-compatible loopback (the probe's)
      '[::a9fe:a9fe]:443', // IPv4-compatible metadata address (the probe's)
      '[::ffff:0:7f00:1]:443', // IPv4-translated
      '[2002:7f00:1::1]:443', // 6to4 of 127.0.0.1
      '[2002:a9fe:a9fe::1]:443', // 6to4 of 169.254.169.254
      '[2001:0:7f00:1::1]:443', // Teredo, server 127.0.0.1
      '[2001:0:808:808::5601:5601]:443', // Teredo, client 169.254.169.254
      '[64:ff9b::7f00:1]:443', // NAT64 of 127.0.0.1
      '[64:ff9b::a9fe:a9fe]:443', // NAT64 of 169.254.169.254
      '[64:ff9b:1:a00:1::]:443', // local-use NAT64 of 10.0.0.1
      '[fec0::1]:443', // site-local
      '[2002:808:808::1]:443', // 6to4 of a public address: refused all the same
    ];
    const { project: p, secret } = await project();
    const body = `
      const net = await import('node:net');
      const port = Number(new URL(process.env.HTTPS_PROXY).port);
      for (const target of ${JSON.stringify(targets)}) {
        const answer = await new Promise((resolve) => {
          const socket = net.connect(port, '127.0.0.1', () => socket.write('CONNECT ' + target + ' HTTP/1.1\\r\\nHost: ' + target + '\\r\\n\\r\\n'));
          let text = '';
          socket.on('data', (chunk) => {
            text += chunk;
            if (text.includes('\\r\\n\\r\\n')) { socket.destroy(); resolve(text.split('\\r\\n\\r\\n')[0].split('\\r\\n')); }
          });
          socket.on('error', (error) => resolve(['error ' + error.message]));
          socket.setTimeout(30000, () => { socket.destroy(); resolve(['timeout']); });
        });
        const reason = answer.find((line) => line.toLowerCase().startsWith('x-slipway-egress-refused:')) ?? '';
        log('CONNECT ' + target + ' -> ' + answer[0] + ' ' + reason.toLowerCase());
      }`;
    const build = await pushAndWait(secret, p.id, 'main', scriptedSite('egress', body));
    const log = build.build_log as string[];
    expect(build.status, log.join('\n')).toBe('ready');
    for (const target of targets) {
      const line = log.find((l) => l.startsWith(`CONNECT ${target} -> `));
      expect(line, log.join('\n')).toMatch(/ -> HTTP\/1\.1 403 Forbidden x-slipway-egress-refused: \w+_address$/);
    }
    // Judged by the address they carry: loopback and the metadata address by name.
    expect(log.find((l) => l.startsWith('CONNECT [::7f00:1]:443'))).toMatch(/loopback_address$/);
    expect(log.find((l) => l.startsWith('CONNECT [::a9fe:a9fe]:443'))).toMatch(/metadata_address$/);
    expect(log.find((l) => l.startsWith('CONNECT [2001:0:808:808::5601:5601]:443'))).toMatch(/metadata_address$/);
  });
});

describe('no host file is read through a symbolic link of the repository', () => {
  it('fails a build whose package-lock.json links to a host file with a clear line, and puts nothing of the file in the log', async () => {
    const { project: p, secret } = await project();
    const build = await pushAndWait(secret, p.id, 'main', { ...staticSite('lockfile link'), 'package-lock.json': { symlink: hostFile } });
    const log = (build.build_log as string[]).join('\n');
    expect(build.status).toBe('failed');
    expect(build.failure_message).toBe(
      'Install failed: package-lock.json is a symbolic link; the platform reads package.json and lockfiles only as regular files committed to the repository, never through a link.',
    );
    // The probe's leak: 32 bits of the host file's SHA-256 in the package cache line. No cache line at all now.
    expect(log).not.toMatch(/Package cache:/);
    expect(log).not.toContain('host-secret-value');
    // A user failure: the breaker counts it.
    const after = await ctx.platform.api('GET', `/api/v1/projects/${p.id}`, { token: ctx.roles.member.token });
    expect(after.body.data.consecutive_build_failures).toBe(1);
  });

  it('fails a build whose package.json links to a host file, and one whose root directory is a link out of the repository', async () => {
    const { project: p, secret } = await project();
    const linked = await pushAndWait(secret, p.id, 'main', { ...staticSite('manifest link'), 'package.json': { symlink: hostFile } });
    expect(linked.status).toBe('failed');
    expect(linked.failure_message).toMatch(/^Install failed: package\.json is a symbolic link; /);
    expect((linked.build_log as string[]).join('\n')).not.toContain('host-secret-value');

    const { project: rooted, secret: rootSecret } = await project({ root_directory: 'app' });
    const outside = await pushAndWait(rootSecret, rooted.id, 'rooted', { ...staticSite('root link'), app: { symlink: hostDir } });
    expect(outside.status).toBe('failed');
    expect(outside.failure_message).toMatch(/^The root directory `app` is a symbolic link in the repository \(app\); /);
  });

  it('still builds a repository whose other files are links (only what the platform reads must be a regular file)', async () => {
    const { project: p, secret } = await project();
    const build = await pushAndWait(secret, p.id, 'main', {
      ...staticSite('other links'),
      'README.md': 'hello',
      'docs.md': { symlink: 'README.md' },
    });
    expect(build.status, (build.build_log as string[]).join('\n')).toBe('ready');
    expect(build.build_log).toContainEqual(expect.stringMatching(/^Package cache: (cold|warm) \(package-lock\.json [0-9a-f]{8}\)$/));
  });
});

describe('what a build sees of the machine', () => {
  it.skipIf(!sandboxed)('has its own PID namespace and /proc: PID 1 shows no platform path, environment or project id', async () => {
    // Another project first: its id must not be visible to this one's build.
    const { project: other } = await project();
    const { project: p, secret } = await project();
    const body = `
      const { readFileSync, readdirSync } = await import('node:fs');
      const show = (name, path) => {
        let text;
        try { text = readFileSync(path, 'latin1').replaceAll('\\0', ' '); } catch (error) { text = 'unreadable ' + error.code; }
        for (const line of text.split('\\n')) if (line.trim()) log(name + ': ' + line);
      };
      show('cmdline', '/proc/1/cmdline');
      show('environ', '/proc/1/environ');
      show('mountinfo', '/proc/1/mountinfo');
      show('selfmounts', '/proc/self/mountinfo');
      const pids = readdirSync('/proc').filter((n) => /^\\d+$/.test(n));
      log('pids: ' + pids.join(' '));
      for (const pid of pids) show('process ' + pid, '/proc/' + pid + '/cmdline');`;
    const build = await pushAndWait(secret, p.id, 'main', scriptedSite('proc', body));
    const lines = build.build_log as string[];
    expect(build.status, lines.join('\n')).toBe('ready');
    const seen = lines.filter((l) => /^(cmdline|environ|mountinfo|selfmounts|pids|process \d+): /.test(l)).join('\n');
    // PID 1 is bubblewrap's reaper, its options read from a pipe: only the build script's command line.
    const cmdline = lines.find((l) => l.startsWith('cmdline: '))!;
    expect(cmdline).toMatch(/bwrap --args 3 -- \/opt\/node\/node \/opt\/slipway\/build\.mjs build \/build\/job\.json\s*$/);
    const environ = lines.filter((l) => l.startsWith('environ: '));
    expect(
      environ.every((l) => /^environ: (PWD=\/)?\s*$/.test(l)),
      environ.join('\n'),
    ).toBe(true);
    // Nothing of the platform's checkout, its PATH, its build and cache folders by project, or any project id.
    const checkout = process.cwd();
    for (const secretPath of [checkout, process.env.PATH!, p.id, other.id, ctx.roles.team.id]) expect(seen).not.toContain(secretPath);
    expect(seen).not.toMatch(/node_modules/);
    // Its own processes only: bubblewrap, the build script, npm and the build command (a handful, low PIDs).
    const pids = lines
      .find((l) => l.startsWith('pids: '))!
      .slice('pids: '.length)
      .split(' ')
      .map(Number);
    expect(pids).toContain(1);
    expect(pids.length, seen).toBeLessThan(20);
    expect(seen).not.toMatch(/vitest|moto_server|tsx/);
  });
});

describe('the fetch line', () => {
  it('names the whole ref of a manual build of a branch head (not its first characters)', async () => {
    const { project: p } = await plainProject();
    ctx.repo.commit('feature/whole-ref', plainStaticSite('whole ref'));
    const started = await ctx.platform.api('POST', `/api/v1/projects/${p.id}/builds`, {
      token: ctx.roles.admin.token,
      body: { branch: 'feature/whole-ref' },
    });
    expect(started.status, started.text).toBe(202);
    const build = await waitForBuild(ctx.platform, ctx.roles.member.token, p.id, started.body.data.deployment_id);
    expect(build.status, (build.build_log as string[]).join('\n')).toBe('ready');
    expect(build.build_log[0]).toBe(`Fetching refs/heads/feature/whole-ref from ${ctx.repo.url}`);
    // A commit by its SHA stays short.
    const { project: q, secret } = await plainProject();
    const pushed = await pushAndWait(secret, q.id, 'main', plainStaticSite('short sha'));
    expect(pushed.build_log[0]).toBe(`Fetching ${pushed.commit_sha.slice(0, 12)} from ${ctx.repo.url}`);
  });
});

describe('replayed deliveries', () => {
  it('acknowledges a delivery of a commit already queued for the branch (a new delivery id) and builds nothing', async () => {
    const { project: p, secret } = await plainProject();
    const sha = ctx.repo.commit('main', plainStaticSite('replayed'));
    const payload = githubPushPayload({ repoUrl: ctx.repo.url, branch: 'main', sha });
    const first = await sendGithub(ctx.platform, { event: 'push', secret, payload });
    expect(first.status, first.text).toBe(202);
    const mine = (reply: typeof first) => ({
      builds: reply.body.data.builds.filter((b: { project_id: string }) => b.project_id === p.id),
      ignored: reply.body.data.ignored.filter((i: { project_id: string }) => i.project_id === p.id),
    });
    expect(mine(first).builds).toHaveLength(1);
    await waitForBuild(ctx.platform, ctx.roles.member.token, p.id, mine(first).builds[0].deployment_id);

    // The captured delivery, resent under a new delivery id, and again while nothing changed.
    for (let i = 0; i < 2; i++) {
      const replay = await sendGithub(ctx.platform, { event: 'push', secret, payload, delivery: randomUUID() });
      expect(replay.status, replay.text).toBe(202);
      expect(replay.body.data.duplicate).toBe(false);
      expect(mine(replay)).toEqual({ builds: [], ignored: [{ project_id: p.id, reason: 'already_built' }] });
    }
    const listing = await ctx.platform.api('GET', `/api/v1/projects/${p.id}/deployments`, { token: ctx.roles.member.token });
    expect(listing.body.data.total).toBe(1);

    // A manual build of the same commit is the team's own choice: it builds.
    const manual = await ctx.platform.api('POST', `/api/v1/projects/${p.id}/builds`, {
      token: ctx.roles.admin.token,
      body: { branch: 'main', commit_sha: sha },
    });
    expect(manual.status, manual.text).toBe(202);
    await waitForBuild(ctx.platform, ctx.roles.member.token, p.id, manual.body.data.deployment_id);
    // A new commit builds as always.
    const next = await sendGithub(ctx.platform, {
      event: 'push',
      secret,
      payload: githubPushPayload({ repoUrl: ctx.repo.url, branch: 'main', sha: ctx.repo.commit('main', plainStaticSite('next')) }),
    });
    expect(mine(next).builds).toHaveLength(1);
    await waitForBuild(ctx.platform, ctx.roles.member.token, p.id, mine(next).builds[0].deployment_id);
  });

  it('builds a commit once when deliveries of it race (a conditional write, not a read)', async () => {
    const { project: p, secret } = await plainProject();
    const sha = ctx.repo.commit('race', plainStaticSite('raced'));
    const payload = githubPushPayload({ repoUrl: ctx.repo.url, branch: 'race', sha });
    const replies = await Promise.all(
      Array.from({ length: 8 }, () => sendGithub(ctx.platform, { event: 'push', secret, payload, delivery: randomUUID() })),
    );
    for (const reply of replies) expect(reply.status, reply.text).toBe(202);
    const queued = replies.flatMap((r) => r.body.data.builds.filter((b: { project_id: string }) => b.project_id === p.id));
    const ignored = replies.flatMap((r) => r.body.data.ignored.filter((i: { project_id: string }) => i.project_id === p.id));
    expect(queued).toHaveLength(1);
    expect(ignored).toEqual(Array.from({ length: 7 }, () => ({ project_id: p.id, reason: 'already_built' })));
    const listing = await ctx.platform.api('GET', `/api/v1/projects/${p.id}/deployments`, { token: ctx.roles.member.token });
    expect(listing.body.data.total).toBe(1);
    await waitForBuild(ctx.platform, ctx.roles.member.token, p.id, queued[0].deployment_id);
  });

  it('builds a branch again at the same commit after its preview was taken down (deleted, then pushed back)', async () => {
    const { project: p, secret } = await plainProject();
    const sha = ctx.repo.commit('comeback', plainStaticSite('comeback'));
    const built = await ctx.push(secret, 'comeback', sha);
    const first = built.body.data.builds.find((b: { project_id: string }) => b.project_id === p.id);
    await waitForBuild(ctx.platform, ctx.roles.member.token, p.id, first.deployment_id);
    await ctx.push(secret, 'comeback', null, { deleted: true });
    const again = await ctx.push(secret, 'comeback', sha);
    const second = again.body.data.builds.find((b: { project_id: string }) => b.project_id === p.id);
    expect(second, again.text).toBeTruthy();
    await waitForBuild(ctx.platform, ctx.roles.member.token, p.id, second.deployment_id);
  });
});

describe('a project connected to a forge takes deliveries on its route only', () => {
  it('a GitHub project refuses its secret as a GitLab token, a GitLab project refuses a GitHub signature', async () => {
    const { project: github, secret: githubSecret } = await plainProject({ git_provider: 'github' });
    const sha = ctx.repo.commit('main', plainStaticSite('routes'));
    const leaked = await sendGitlab(ctx.platform, {
      event: 'Push Hook',
      token: githubSecret,
      payload: gitlabPushPayload({ repoUrl: ctx.repo.url, branch: 'main', sha }),
    });
    expect(leaked.status, leaked.text).toBe(401);
    expect(leaked.body.code).toBe('GIT_WEBHOOK_SIGNATURE_INVALID');
    const signed = await sendGithub(ctx.platform, {
      event: 'push',
      secret: githubSecret,
      payload: githubPushPayload({ repoUrl: ctx.repo.url, branch: 'main', sha }),
    });
    expect(signed.status, signed.text).toBe(202);
    expect(signed.body.data.builds.map((b: { project_id: string }) => b.project_id)).toEqual([github.id]);

    const { project: gitlab, secret: gitlabSecret } = await plainProject({ git_provider: 'GitLab' });
    const sha2 = ctx.repo.commit('main', plainStaticSite('routes 2'));
    const forged = await sendGithub(ctx.platform, {
      event: 'push',
      secret: gitlabSecret,
      payload: githubPushPayload({ repoUrl: ctx.repo.url, branch: 'main', sha: sha2 }),
    });
    expect(forged.status, forged.text).toBe(401);
    const token = await sendGitlab(ctx.platform, {
      event: 'Push Hook',
      token: gitlabSecret,
      payload: gitlabPushPayload({ repoUrl: ctx.repo.url, branch: 'main', sha: sha2 }),
    });
    expect(token.status, token.text).toBe(202);
    expect(token.body.data.builds.map((b: { project_id: string }) => b.project_id)).toEqual([gitlab.id]);
    for (const reply of [signed, token]) {
      const id = reply.body.data.builds[0].deployment_id;
      await waitForBuild(ctx.platform, ctx.roles.member.token, reply.body.data.builds[0].project_id, id);
    }
  });
});
