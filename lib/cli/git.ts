import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { githubSignature } from '../builds/webhooks/github.ts';
import { client, parse } from './args.ts';
import { cliConfig } from './config.ts';
import { CliError, UsageError } from './operator-env.ts';
import { folderKey, linkProject, projectOfFolder } from './settings.ts';

/**
 * Git builds on one machine (docs/builds.md, "Your first Git build"): `git serve` serves a repository
 * read-only over Git's smart HTTP on loopback, where the local platform's builds fetch it; `git hook install`
 * connects a project to it (making one with --name), makes the project's webhook secret and writes the
 * repository's hook (post-commit in a working repository, post-receive in a bare one), which runs `git hook
 * run`: the signed GitHub-shaped push webhook a forge would send.
 */
const ZERO = '0000000000000000000000000000000000000000';
/** Marks a hook this command wrote: only such a hook is overwritten. */
const HOOK_MARK = '# Written by `slipway git hook install`';

function git(cwd: string, args: string[]): string | null {
  const out = spawnSync('git', args, { cwd, encoding: 'utf8' });
  return out.status === 0 ? out.stdout.trim() : null;
}

interface Repository {
  /** The folder served: the bare repository, or the working tree's top. */
  dir: string;
  gitDir: string;
  bare: boolean;
}

function repositoryAt(dir: string): Repository {
  const at = resolve(dir);
  const gitDir = git(at, ['rev-parse', '--absolute-git-dir']);
  if (!gitDir) throw new CliError(`${at} is not a Git repository (git init makes one).`);
  const bare = git(at, ['rev-parse', '--is-bare-repository']) === 'true';
  return { dir: bare ? gitDir : (git(at, ['rev-parse', '--show-toplevel']) ?? at), gitDir, bare };
}

/** The address the local platform's builds fetch a served repository from. */
const servedUrl = (repo: Repository) => `http://127.0.0.1:${cliConfig.gitServePort()}/${basename(repo.dir)}`;

/** One request through `git http-backend` (CGI), fetches only: a push is refused. */
function httpBackend(repo: Repository, req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://git.invalid');
  if (url.searchParams.get('service') === 'git-receive-pack' || url.pathname.endsWith('/git-receive-pack')) {
    res.writeHead(403, { 'content-type': 'text/plain' });
    return void res.end('This repository is served for fetching only.\n');
  }
  const child = spawn(join(git(repo.dir, ['--exec-path']) ?? '/usr/lib/git-core', 'git-http-backend'), [], {
    env: {
      PATH: cliConfig.searchPath(),
      GIT_PROJECT_ROOT: dirname(repo.dir),
      GIT_HTTP_EXPORT_ALL: '1',
      // Builds fetch exactly the pushed commit by its SHA, as forges allow.
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'uploadpack.allowAnySHA1InWant',
      GIT_CONFIG_VALUE_0: 'true',
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.slice(1),
      REQUEST_METHOD: req.method ?? 'GET',
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
      REMOTE_ADDR: '127.0.0.1',
    },
  });
  relayCgiReply(child, req, res);
}

/** Passes a request to git http-backend (a CGI program) and its reply back: its header lines, `Status:` as the status. */
export function relayCgiReply(child: ChildProcessWithoutNullStreams, req: IncomingMessage, res: ServerResponse): void {
  req.pipe(child.stdin);
  let head = Buffer.alloc(0);
  let headersDone = false;
  child.stdout.on('data', (chunk: Buffer) => {
    if (headersDone) return void res.write(chunk);
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n');
    if (end < 0) return;
    headersDone = true;
    let status = 200;
    for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
      const at = line.indexOf(':');
      const name = line.slice(0, at).trim();
      const value = line.slice(at + 1).trim();
      if (name.toLowerCase() === 'status') status = Number(value.split(' ')[0]);
      else res.setHeader(name, value);
    }
    res.writeHead(status);
    res.write(head.subarray(end + 4));
  });
  child.stdout.on('end', () => res.end());
  child.on('error', () => res.destroy());
}

async function serve(args: string[]): Promise<number> {
  const { positionals } = parse(args, {}, 1);
  const repo = repositoryAt(positionals[0] ?? '.');
  const server = createServer((req, res) => httpBackend(repo, req, res));
  const port = cliConfig.gitServePort();
  await new Promise<void>((done, fail) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      fail(
        new CliError(
          error.code === 'EADDRINUSE'
            ? `Port ${port} is in use (another \`slipway git serve\`?); set SLIPWAY_GIT_PORT to serve on another.`
            : error.message,
        ),
      ),
    );
    server.listen(port, '127.0.0.1', () => done());
  });
  process.stderr.write(`Serving ${repo.dir} for builds on this machine at ${servedUrl(repo)} (fetch only). Ctrl-C stops it.\n`);
  await new Promise<void>((done) => {
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
  server.close();
  return 0;
}

interface ProjectView {
  id: string;
  name: string;
  git_repo_url: string | null;
  default_branch: string | null;
  auto_deploy_enabled: boolean;
}

const shellQuote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/** This CLI as a command line (the node that runs it, its loader flags, its entry file), for the hook to call. */
function selfCommand(): string {
  const entry = process.argv[1] ?? '';
  return [process.execPath, ...process.execArgv, isAbsolute(entry) ? entry : resolve(entry)].map(shellQuote).join(' ');
}

async function hookInstall(args: string[]): Promise<number> {
  const { values: o, positionals } = parse(
    args,
    { project: { type: 'string' }, name: { type: 'string' }, 'repo-url': { type: 'string' }, force: { type: 'boolean' } },
    1,
  );
  const repo = repositoryAt(positionals[0] ?? '.');
  const api = client();
  const branch = git(repo.dir, ['symbolic-ref', '--short', 'HEAD']) ?? 'main';
  const repoUrl = o['repo-url'] ?? servedUrl(repo);
  let project: ProjectView;
  if (o.name && o.project) throw new UsageError('Give --project ID (an existing project) or --name NAME (a new one), not both.');
  if (o.name) {
    // Naming the repository turns auto-deploy on (docs/builds.md): a push builds from the first one.
    project = await api.call('POST', '/api/v1/projects', { json: { name: o.name, git_repo_url: repoUrl, default_branch: branch } });
    linkProject(folderKey(repo.dir), api.baseUrl, project.id);
  } else {
    const id = projectOfFolder(o.project, api.baseUrl);
    project = await api.call('GET', `/api/v1/projects/${encodeURIComponent(id)}`);
    // Connecting a project to its first repository is asking for its pushes to build, as on create.
    if (!project.git_repo_url)
      project = await api.call('PATCH', `/api/v1/projects/${encodeURIComponent(id)}`, {
        json: { git_repo_url: repoUrl, auto_deploy_enabled: true, ...(project.default_branch ? {} : { default_branch: branch }) },
      });
  }
  const hookName = repo.bare ? 'post-receive' : 'post-commit';
  const hooksDir = git(repo.dir, ['rev-parse', '--path-format=absolute', '--git-path', 'hooks']) ?? join(repo.gitDir, 'hooks');
  const hookPath = join(hooksDir, hookName);
  if (existsSync(hookPath) && !readFileSync(hookPath, 'utf8').includes(HOOK_MARK) && !o.force)
    throw new CliError(`${hookPath} exists and was not written by slipway; move it away or pass --force to replace it.`);
  const { secret } = await api.call<{ secret: string }>('POST', `/api/v1/projects/${encodeURIComponent(project.id)}/git/webhook-secret`);
  const settings: Record<string, string> = {
    'slipway.webhookUrl': `${api.baseUrl}/api/v1/webhooks/git/github`,
    'slipway.repoUrl': project.git_repo_url ?? repoUrl,
    'slipway.defaultBranch': project.default_branch ?? branch,
    'slipway.webhookSecret': secret,
  };
  for (const [key, value] of Object.entries(settings))
    if (git(repo.dir, ['config', '--local', key, value]) === null) throw new CliError(`Could not write ${key} to the repository's config.`);
  writeFileSync(
    hookPath,
    `#!/bin/sh\n${HOOK_MARK}: sends the platform a signed push webhook.\nexec ${selfCommand()} git hook run ${hookName}\n`,
  );
  chmodSync(hookPath, 0o755);
  process.stdout.write(
    `Project ${project.name} (${project.id}) builds ${project.git_repo_url}; auto-deploy is ${
      project.auto_deploy_enabled ? 'on' : "off (pushes to the production branch are ignored; turn it on in the console's Settings)"
    }.\n` +
      `Wrote ${hookPath}: each ${repo.bare ? 'push to' : 'commit in'} this repository sends ${settings['slipway.webhookUrl']} a signed push.\n` +
      'A new webhook secret was made; one set up before for this project no longer matches.\n',
  );
  return 0;
}

interface WebhookAnswer {
  builds: { status: string; deployment_id: string; target: string; skip_reason: string | null }[];
  ignored: { reason: string }[];
}

interface PushedRef {
  branch: string;
  sha: string;
}

/** What the hook reports: post-commit the current branch's head; post-receive each updated branch (stdin). */
function pushedRefs(hook: string, dir: string): PushedRef[] {
  if (hook === 'post-commit') {
    const branch = git(dir, ['symbolic-ref', '--short', 'HEAD']);
    const sha = git(dir, ['rev-parse', 'HEAD']);
    return branch && sha ? [{ branch, sha }] : [];
  }
  return readFileSync(0, 'utf8')
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter(([, , ref]) => ref?.startsWith('refs/heads/'))
    .map(([, sha, ref]) => ({ branch: ref!.slice('refs/heads/'.length), sha: sha! }));
}

async function hookRun(args: string[]): Promise<number> {
  const hook = args[0];
  if (hook !== 'post-commit' && hook !== 'post-receive') throw new UsageError('Usage: slipway git hook run post-commit|post-receive');
  const dir = process.cwd();
  const setting = (key: string) => git(dir, ['config', '--get', key]);
  const [webhookUrl, repoUrl, secret] = [setting('slipway.webhookUrl'), setting('slipway.repoUrl'), setting('slipway.webhookSecret')];
  if (!webhookUrl || !repoUrl || !secret) throw new CliError('This repository has no slipway settings: run `slipway git hook install`.');
  let failed = false;
  for (const { branch, sha } of pushedRefs(hook, dir)) {
    const deleted = sha === ZERO;
    const body = JSON.stringify({
      ref: `refs/heads/${branch}`,
      after: sha,
      deleted,
      head_commit: deleted ? null : { id: sha, message: git(dir, ['log', '-1', '--format=%B', sha]) ?? '' },
      repository: { clone_url: repoUrl, default_branch: setting('slipway.defaultBranch') ?? branch },
    });
    const reply = await fetch(webhookUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'push',
        'x-github-delivery': randomUUID(),
        'x-hub-signature-256': githubSignature(secret, body),
      },
      body,
    }).catch((error: Error) => error);
    if (reply instanceof Error) {
      process.stderr.write(`slipway: the push of ${branch} was not sent: could not reach ${webhookUrl} (${reply.message}).\n`);
      failed = true;
      continue;
    }
    const answer = (await reply.json().catch(() => null)) as { data?: WebhookAnswer; error?: string } | null;
    if (!reply.ok) {
      process.stderr.write(
        `slipway: the platform refused the push of ${branch} (${reply.status}): ${answer?.error ?? 'no reason given'}\n`,
      );
      failed = true;
      continue;
    }
    for (const build of answer?.data?.builds ?? [])
      process.stderr.write(
        build.status === 'queued'
          ? `slipway: build ${build.deployment_id} queued for ${branch} (${build.target}); follow it: slipway logs --build ${build.deployment_id} --follow\n`
          : `slipway: ${branch} recorded as skipped (${build.skip_reason}).\n`,
      );
    for (const ignored of answer?.data?.ignored ?? []) process.stderr.write(`slipway: ${branch} not built: ${ignored.reason}.\n`);
  }
  return failed ? 1 : 0;
}

export const gitCommands: Record<string, { usage: string; run: (args: string[]) => Promise<number> }> = {
  git: {
    usage: 'git serve [DIR] | git hook install [DIR] [--project ID | --name NAME] [--repo-url URL] [--force]',
    run: async (args: string[]) => {
      const [sub, ...rest] = args;
      if (sub === 'serve') return serve(rest);
      if (sub === 'hook' && rest[0] === 'install') return hookInstall(rest.slice(1));
      if (sub === 'hook' && rest[0] === 'run') return hookRun(rest.slice(1));
      throw new UsageError('Usage: slipway git serve [DIR] | slipway git hook install [DIR] [--project ID | --name NAME]');
    },
  },
};
