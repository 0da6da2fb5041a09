import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { relayCgiReply } from '../../lib/cli/git.ts';

/**
 * A real Git repository served over Git's smart HTTP protocol on loopback:
 * Debian's `git http-backend` as a CGI behind a node:http server, the way a
 * forge serves clones. Tests commit and push to it with the git command line
 * and builds fetch from it exactly as from a forge. An optional check of the
 * Authorization header plays a forge's access rule (a PAT, a forge JWT).
 */
const HTTP_BACKEND = '/usr/lib/git-core/git-http-backend';

export interface GitServer {
  /** The repository's clone URL: http://127.0.0.1:PORT/NAME.git */
  url: string;
  /** Commits `files` (path -> content; null deletes; `{ symlink }` a symbolic link to that target) on `branch` and pushes; the new commit's SHA. */
  commit(branch: string, files: Record<string, string | Buffer | null | { symlink: string }>, message?: string): string;
  /** Deletes a branch on the server. */
  deleteBranch(branch: string): void;
  /** Authorization headers the server received on fetches. */
  authorizations: string[];
  close(): Promise<void>;
}

function git(cwd: string, args: string[]): string {
  const out = spawnSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'Test',
      GIT_AUTHOR_EMAIL: 't@example.test',
      GIT_COMMITTER_NAME: 'Test',
      GIT_COMMITTER_EMAIL: 't@example.test',
    },
  });
  if (out.status !== 0) throw new Error(`git ${args.join(' ')}: ${out.stderr}`);
  return out.stdout.trim();
}

function cgi(root: string, req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://git.invalid');
  const child = spawn(HTTP_BACKEND, [], {
    env: {
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: '1',
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

export async function startGitServer(
  options: { name?: string; defaultBranch?: string; authorize?: (header: string | undefined) => boolean } = {},
): Promise<GitServer> {
  const root = mkdtempSync(join(tmpdir(), 'slipway-git-'));
  const name = `${options.name ?? 'site'}.git`;
  const bare = join(root, name);
  const defaultBranch = options.defaultBranch ?? 'main';
  git(root, ['init', '-q', '--bare', `--initial-branch=${defaultBranch}`, bare]);
  // Fetching one commit by its SHA, as builds do, the way forges allow it.
  git(bare, ['config', 'uploadpack.allowAnySHA1InWant', 'true']);
  const work = join(root, 'work');
  git(root, ['init', '-q', `--initial-branch=${defaultBranch}`, work]);
  const authorizations: string[] = [];
  const server: Server = createServer((req, res) => {
    const header = req.headers.authorization;
    if (header) authorizations.push(header);
    if (options.authorize && !options.authorize(header)) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="git"' });
      return void res.end();
    }
    cgi(root, req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/${name}`,
    authorizations,
    commit(branch, files, message = `change on ${branch}`) {
      const exists = (ref: string) => spawnSync('git', ['-C', work, 'rev-parse', '--verify', '-q', ref]).status === 0;
      if (exists('HEAD')) git(work, ['checkout', '-q', ...(exists(`refs/heads/${branch}`) ? [branch] : ['-B', branch])]);
      else git(work, ['checkout', '-q', '--orphan', branch]);
      for (const [path, content] of Object.entries(files)) {
        if (content === null) rmSync(join(work, path), { force: true, recursive: true });
        else {
          mkdirSync(dirname(join(work, path)), { recursive: true });
          rmSync(join(work, path), { force: true, recursive: true });
          if (typeof content === 'object' && 'symlink' in content) symlinkSync(content.symlink, join(work, path));
          else writeFileSync(join(work, path), content);
        }
      }
      git(work, ['add', '-A']);
      git(work, ['commit', '-q', '--allow-empty', '-m', message]);
      git(work, ['push', '-q', '--force', bare, `HEAD:refs/heads/${branch}`]);
      return git(work, ['rev-parse', 'HEAD']);
    },
    deleteBranch(branch) {
      git(work, ['push', '-q', bare, `:refs/heads/${branch}`]);
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(root, { recursive: true, force: true });
    },
  };
}
