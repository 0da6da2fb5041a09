import type { ApiClient } from './api-client.ts';
import { client, parse } from './args.ts';
import { UsageError } from './operator-env.ts';
import { type JsonObject } from '../json.ts';

/**
 * The builds commands of the CLI (docs/builds.md): `build` starts a build of a
 * branch by hand, `auto-deploy resume` clears the failure breaker, and
 * `logs --build ID [--follow]` prints a build's log, following a running
 * build through the log's polling cursor until it ends (exit 1 unless it
 * ended ready).
 */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Between two polls of a running build's log. */
const FOLLOW_POLL_MS = 1000;

interface LogPage {
  status: string;
  lines: string[];
  next_cursor: number;
  done: boolean;
}

/** Prints a build's log; with `follow`, polls until the build has ended and every line is printed. Exit code by its end. */
export async function printBuildLog(
  api: ApiClient,
  projectId: string,
  deploymentId: string,
  options: { follow?: boolean; json?: boolean },
): Promise<number> {
  const path = `/api/v1/projects/${encodeURIComponent(projectId)}/deployments/${encodeURIComponent(deploymentId)}/log`;
  const all: string[] = [];
  let cursor = 0;
  for (;;) {
    const page = await api.call<LogPage>('GET', `${path}?cursor=${cursor}`);
    if (!options.json) for (const line of page.lines) process.stdout.write(`${line}\n`);
    all.push(...page.lines);
    cursor = page.next_cursor;
    const finished = page.done && page.lines.length === 0;
    if (!options.follow || finished) {
      if (options.json) process.stdout.write(`${JSON.stringify({ status: page.status, lines: all }, null, 2)}\n`);
      else if (options.follow) process.stderr.write(`Build ${deploymentId}: ${page.status}\n`);
      return !options.follow || page.status === 'ready' ? 0 : 1;
    }
    if (page.lines.length === 0) await sleep(FOLLOW_POLL_MS);
  }
}

export function buildCommands(
  projectOf: (flag: string | undefined, api: ApiClient) => string,
): Record<string, { usage: string; run: (args: string[]) => Promise<number> }> {
  return {
    build: {
      usage: 'build --branch BRANCH [--commit SHA] [--project ID] [--follow] [--json]',
      run: async (args: string[]) => {
        const { values: o } = parse(args, {
          branch: { type: 'string' },
          commit: { type: 'string' },
          project: { type: 'string' },
          follow: { type: 'boolean' },
          json: { type: 'boolean' },
        });
        if (!o.branch) throw new UsageError('Name the branch to build with --branch.');
        const api = client();
        const projectId = projectOf(o.project, api);
        const queued = await api.call<{ deployment_id: string; target: string; preview_url: string | null }>(
          'POST',
          `/api/v1/projects/${encodeURIComponent(projectId)}/builds`,
          {
            json: { branch: o.branch, ...(o.commit ? { commit_sha: o.commit } : {}) },
          },
        );
        if (o.json && !o.follow) process.stdout.write(`${JSON.stringify(queued, null, 2)}\n`);
        else
          process.stderr.write(
            `Queued build ${queued.deployment_id} (${queued.target}${queued.preview_url ? `, ${queued.preview_url}` : ''}).\n`,
          );
        return o.follow ? printBuildLog(api, projectId, queued.deployment_id, { follow: true, json: o.json }) : 0;
      },
    },
    'auto-deploy': {
      usage: 'auto-deploy resume [--project ID] [--json]',
      run: async (args: string[]) => {
        const { values: o, positionals } = parse(args, { project: { type: 'string' }, json: { type: 'boolean' } }, 1);
        if (positionals[0] !== 'resume') throw new UsageError('Usage: slipway auto-deploy resume [--project ID]');
        const api = client();
        const project = await api.call<JsonObject>(
          'POST',
          `/api/v1/projects/${encodeURIComponent(projectOf(o.project, api))}/auto-deploy/resume`,
        );
        process.stdout.write(
          o.json
            ? `${JSON.stringify(project, null, 2)}\n`
            : `Auto-deploy resumed for ${String(project.name)}: the failure breaker is cleared.\n`,
        );
        return 0;
      },
    },
  };
}
