import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { ApiCallError, ApiClient } from './api-client.ts';
import { deploySite } from './deploy.ts';
import { client, parse } from './args.ts';
import { CliError } from './operator-env.ts';
import {
  apiAddress,
  enclosingApp,
  folderKey,
  linkedProject,
  linkProject,
  projectOfFolder,
  readSettingsFile,
  settingsPath,
  unlinkProject,
  writeSettingsFile,
} from './settings.ts';
import { cliConfig } from './config.ts';
import { tableLines } from './table.ts';
import { type JsonObject } from '../json.ts';

/**
 * The user commands of the CLI: deploy, rollback, projects, login. They talk
 * to the API only (never to the table), with the token from SLIPWAY_TOKEN or
 * `slipway login`.
 */

function print(json: boolean | undefined, value: unknown, human: string): void {
  process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : human);
}

/** A list endpoint's data: an array, or an object carrying one. */
/**
 * The newest ready deployment older than the live one: the listing is newest first in numbered
 * pages, read until the live one and a ready one after it are found (or the pages end).
 */
async function readyBefore(api: ApiClient, projectId: string, liveId: string | null | undefined): Promise<string | undefined> {
  let seenLive = false;
  for (let page = 1; ; page++) {
    const path = `/api/v1/projects/${encodeURIComponent(projectId)}/deployments?page=${page}&page_size=100`;
    const reply: { total?: number } = await api.call('GET', path);
    const deployments = listOf<DeploymentView>(reply, 'deployments');
    for (const d of deployments) {
      // A preview (a branch's build) is never production's previous state: --to names one on purpose.
      if (seenLive && d.status === 'ready' && d.target !== 'preview') return deploymentId(d);
      if (deploymentId(d) === liveId) seenLive = true;
    }
    if (deployments.length === 0 || page * 100 >= (reply.total ?? 0)) return undefined;
  }
}

function listOf<T>(data: unknown, field: string): T[] {
  if (Array.isArray(data)) return data as T[];
  const inner = (data as JsonObject | null)?.[field] ?? (data as JsonObject | null)?.items;
  return Array.isArray(inner) ? (inner as T[]) : [];
}

interface ProjectView {
  id: string;
  name: string;
  subdomain: string;
  production_url: string;
  live_deployment_id: string | null;
}

interface DeploymentView {
  id?: string;
  deployment_id?: string;
  status: string;
  created_at: string;
  target?: 'production' | 'preview' | null;
}

const deploymentId = (d: DeploymentView) => (d.id ?? d.deployment_id)!;

/** A project name for a folder: a build folder (dist/ ...) is named after its app (package.json name, else the app folder). */
export function projectNameFor(dir: string): string {
  const app = enclosingApp(dir);
  if (!app) return basename(dir);
  try {
    const name = (JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as { name?: unknown }).name;
    if (typeof name === 'string' && name.trim() !== '') return name.trim();
  } catch {
    // No package.json, or not JSON: the folder's name.
  }
  return basename(app);
}

interface ServingRulesReport {
  redirects: number;
  headers: number;
  skipped: { file: string; line: number; reason: string }[];
  skipped_count?: number;
}

/** Each line publishing skipped of `_redirects` and `_headers`, as a warning (the rest of the deployment is live). */
export function servingRulesWarnings(rules: ServingRulesReport): string[] {
  const lines = rules.skipped.map((s) => `Warning: ${s.file} line ${s.line} skipped: ${s.reason}`);
  const more = (rules.skipped_count ?? rules.skipped.length) - rules.skipped.length;
  if (more > 0) lines.push(`Warning: ${more} more lines of _redirects and _headers skipped.`);
  return lines;
}

/** What a deploy with functions says for a team outside the functions beta. */
export const NOT_ENROLLED =
  'These functions are deployed but answer only once your team is enrolled in the functions beta (until then their URLs answer 404): ask the platform operator to enroll the team.';

/** A link to a project the platform no longer has (a provisional project that expired before it published). */
const goneProject = (error: unknown) =>
  error instanceof ApiCallError && (error.code === 'PROJECT_NOT_FOUND' || error.code === 'PROJECT_EXPIRED');

export const siteCommands: Record<string, { usage: string; run: (args: string[]) => Promise<number> }> = {
  deploy: {
    usage: 'deploy DIR [--project ID] [--name N] [--subdomain S] [--label L] [--json]',
    run: async (args) => {
      const { values: o, positionals } = parse(
        args,
        {
          project: { type: 'string' },
          name: { type: 'string' },
          subdomain: { type: 'string' },
          label: { type: 'string' },
          json: { type: 'boolean' },
        },
        1,
      );
      const dir = positionals[0] ?? '.';
      const api = client();
      const key = folderKey(dir);
      // A folder deployed before publishes to the same project, unless told otherwise.
      const linked = o.project || o.name || o.subdomain ? null : linkedProject(key, api.baseUrl);
      const deployTo = (projectId: string | null) =>
        deploySite(api, {
          dir,
          projectId,
          name: o.name ?? projectNameFor(key),
          subdomain: o.subdomain,
          label: o.label,
          progress: process.stderr,
          // Linked as soon as the project exists: a deploy that fails later (a functions build, a lost upload)
          // is retried into the same project (POST /projects/{id}/uploads), never into a second one.
          onBegin: (session) => linkProject(key, api.baseUrl, session.project_id),
        });
      let deployed;
      try {
        deployed = await deployTo(o.project ?? linked);
      } catch (error) {
        if (!linked || !goneProject(error)) throw error;
        unlinkProject(key, api.baseUrl, linked);
        deployed = await deployTo(null);
      }
      const { functionSources, rulesFiles, ...summary } = deployed;
      // What publishing skipped of _redirects and _headers: asked only when the folder has one of them.
      const rules = rulesFiles
        ? api
            .call<{ serving_rules?: ServingRulesReport }>(
              'GET',
              `/api/v1/projects/${encodeURIComponent(summary.project_id)}/deployments/${encodeURIComponent(summary.deployment_id)}`,
            )
            .then((data) => data.serving_rules ?? null)
            .catch(() => null)
        : Promise.resolve(null);
      // The deployment is live whatever happens here: a failed listing only leaves the function URLs out.
      // A folder with no functions/ sources has none: no request (it was a third of a repeat deploy's time).
      const listed = !functionSources
        ? { functions: [], enrolled: true }
        : await api
            .call<{ functions: { name: string; url: string }[]; functions_beta_enrolled?: boolean }>(
              'GET',
              `/api/v1/projects/${encodeURIComponent(summary.project_id)}/functions`,
            )
            .then((data) => ({
              functions: data.functions.map(({ name, url }) => ({ name, url })),
              enrolled: data.functions_beta_enrolled !== false,
            }))
            .catch(() => null);
      const functions = listed?.functions ?? null;
      // Built and listed, but neither door answers them until the team is in the beta: say so, not only the URLs.
      const notEnrolled = listed !== null && !listed.enrolled && listed.functions.length > 0;
      if (notEnrolled && o.json) process.stderr.write(`${NOT_ENROLLED}\n`);
      const servingRules = await rules;
      for (const line of servingRules ? servingRulesWarnings(servingRules) : []) process.stderr.write(`${line}\n`);
      print(
        o.json,
        {
          ...summary,
          ...(functions ? { functions } : {}),
          ...(notEnrolled ? { functions_beta_enrolled: false } : {}),
          ...(servingRules ? { serving_rules: servingRules } : {}),
        },
        `Deployed ${summary.files_total} files (${summary.files_sent} sent, ${summary.bytes_sent} bytes).\n` +
          `Deployment ${summary.deployment_id} is live:\n  ${summary.url}\n` +
          (functions && functions.length > 0 ? `Functions:\n${functions.map((f) => `  ${f.name}  ${f.url}\n`).join('')}` : '') +
          (notEnrolled ? `${NOT_ENROLLED}\n` : ''),
      );
      return 0;
    },
  },

  rollback: {
    usage: 'rollback [--project ID] [--to DEPLOYMENT_ID] [--json]',
    run: async (args) => {
      const { values: o } = parse(args, { project: { type: 'string' }, to: { type: 'string' }, json: { type: 'boolean' } });
      const api = client();
      const projectId = projectOfFolder(o.project, api.baseUrl);
      let target = o.to;
      if (!target) {
        const project = await api.call<ProjectView>('GET', `/api/v1/projects/${encodeURIComponent(projectId)}`);
        target = await readyBefore(api, projectId, project.live_deployment_id);
        if (!target) throw new CliError('There is no deployment before the live one to roll back to.');
      }
      const promoted = await api.call<ProjectView>('POST', `/api/v1/projects/${encodeURIComponent(projectId)}/promote`, {
        json: { deployment_id: target },
      });
      print(
        o.json,
        promoted,
        `Production of ${promoted.name} now serves deployment ${promoted.live_deployment_id}:\n  ${promoted.production_url}\n`,
      );
      return 0;
    },
  },

  projects: {
    usage: 'projects [--json]',
    run: async (args) => {
      const { values: o } = parse(args, { json: { type: 'boolean' } });
      const api = client();
      const projects: ProjectView[] = [];
      // The list is paged; follow next_cursor to the end.
      for (let cursor: string | null = null, first = true; first || cursor; first = false) {
        const page: { next_cursor?: string | null } = await api.call(
          'GET',
          `/api/v1/projects?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        );
        projects.push(...listOf<ProjectView>(page, 'projects'));
        cursor = Array.isArray(page) ? null : (page.next_cursor ?? null);
      }
      if (o.json) {
        print(true, projects, '');
        return 0;
      }
      if (projects.length === 0) {
        process.stdout.write('No projects yet. Deploy a folder with `slipway deploy DIR`.\n');
        return 0;
      }
      const rows = [
        ['ID', 'NAME', 'URL', 'LIVE DEPLOYMENT'],
        ...projects.map((p) => [p.id, p.name, p.production_url, p.live_deployment_id ?? '-']),
      ];
      process.stdout.write(`${tableLines(rows).join('\n')}\n`);
      return 0;
    },
  },

  login: {
    usage: 'login [--token T] [--api-url URL]',
    run: async (args) => {
      const { values: o } = parse(args, { token: { type: 'string' }, 'api-url': { type: 'string' } });
      const settings = readSettingsFile();
      const address = o['api-url']
        ? { url: o['api-url'].replace(/\/+$/, ''), source: '--api-url' }
        : apiAddress(settings, { preferRunning: true });
      const url = address.url;
      process.stderr.write(`Using the API at ${url} (from ${address.source}).\n`);
      let token = o.token ?? cliConfig.token();
      if (!token) {
        const rl = createInterface({ input: process.stdin, output: process.stdin.isTTY ? process.stderr : undefined });
        token = (await rl.question(process.stdin.isTTY ? 'API token (a session token or API key): ' : '')).trim();
        rl.close();
      }
      if (!token) throw new CliError('No token given.');
      // Check the token before storing it: a typo is better reported now than at the next deploy.
      let team: { name?: string; slug?: string };
      try {
        team = await new ApiClient(url, token).call('GET', '/api/v1/team/profile');
      } catch (error) {
        if (!(error instanceof ApiCallError)) throw error;
        if (error.status === 401) throw new CliError(`The API at ${url} refused this token: ${error.message}`);
        // Authenticated, but no current team to name (a user in no team yet): still a good token.
        team = {};
      }
      writeSettingsFile({ ...settings, api_url: url, token });
      process.stdout.write(`Logged in to ${url} (team ${team.name ?? team.slug ?? '?'}). Settings saved in ${settingsPath()}.\n`);
      return 0;
    },
  },
};

export const siteUsage = Object.values(siteCommands)
  .map((c) => `  ${c.usage}`)
  .join('\n');
