import { readFileSync } from 'node:fs';
import { ApiCallError, type ApiClient } from './api-client.ts';
import { client, interactive, parse } from './args.ts';
import { httpSend, type HttpAnswer } from './http.ts';
import { CliError, UsageError } from './operator-env.ts';
import { projectOfFolder } from './settings.ts';
import { printBuildLog } from './builds.ts';
import { followFunctionTail } from './tail.ts';
import { tableLines } from './table.ts';

/**
 * The functions commands of the CLI: `functions` (or `functions list`) lists a
 * project's functions, their URLs and schedules, `functions run NAME` starts a
 * run now (a members' endpoint, trigger `manual`; with --wait it is polled to
 * the end), `invoke` queues a call through the public queued door (and
 * with --wait polls it to the end), `logs` prints an invocation's console
 * output (a members' endpoint). The invoke and poll requests carry no token:
 * the queued door is public, and the function must never see the caller's
 * platform credential.
 */

export const projectOf = (flag: string | undefined, api: ApiClient) => projectOfFolder(flag, api.baseUrl);

interface FunctionView {
  name: string;
  url: string;
  schedule: string | null;
  next_run_at: string | null;
}

interface ProjectView {
  id: string;
  subdomain: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const TERMINAL = new Set(['completed', 'failed', 'timed_out']);

/** A public queued-door request: no token; 429 waits for its Retry-After (the door allows 20 a minute per address). */
async function publicCall(baseUrl: string, method: string, path: string, init: { body?: Buffer; contentType?: string } = {}): Promise<any> {
  for (let attempt = 0; ; attempt++) {
    let res: HttpAnswer;
    try {
      res = await httpSend(`${baseUrl}${path}`, {
        method,
        headers: init.contentType ? { 'content-type': init.contentType } : {},
        body: init.body,
      });
    } catch (error) {
      throw new CliError(`The API at ${baseUrl} did not answer: ${(error as Error).message}`);
    }
    let body: any = null;
    try {
      body = JSON.parse(res.text);
    } catch {
      // Not JSON.
    }
    if (res.status >= 200 && res.status < 300) return body?.data;
    const retryAfter = Number(res.headers['retry-after']);
    if (res.status === 429 && body?.code === 'RATE_LIMITED' && attempt < 5 && retryAfter > 0 && retryAfter <= 60) {
      process.stderr.write(`Rate limited; waiting ${retryAfter}s.\n`);
      await sleep(retryAfter * 1000);
      continue;
    }
    if (typeof body?.code === 'string') throw new ApiCallError(res.status, body.code, body.error ?? '', body.details ?? null);
    throw new ApiCallError(res.status, `HTTP_${res.status}`, `The API answered ${res.status}`, null);
  }
}

/**
 * `--data @file` reads the file; otherwise the text itself is the body, sent as application/json when it
 * parses as JSON and as text/plain otherwise (docs/cli.md): a request body need not be JSON.
 */
function requestBody(data: string | undefined): { body?: Buffer; contentType?: string } {
  if (data === undefined) return {};
  if (data.startsWith('@')) {
    const file = data.slice(1);
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch (error) {
      throw new CliError(`Cannot read ${file}: ${(error as Error).message}`);
    }
    return { body: bytes, contentType: file.endsWith('.json') ? 'application/json' : 'application/octet-stream' };
  }
  let json = true;
  try {
    JSON.parse(data);
  } catch {
    json = false;
  }
  return { body: Buffer.from(data), contentType: json ? 'application/json' : 'text/plain; charset=utf-8' };
}

/** The body as text when it is valid UTF-8 without control characters, else a note of its size. */
function printable(base64: string): string {
  const bytes = Buffer.from(base64, 'base64');
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  // eslint-disable-next-line no-control-regex
  if (!text.includes('\uFFFD') && !/[\u0000-\u0008\u000e-\u001f]/.test(text)) return text;
  return `(${bytes.length} bytes of binary data; --json prints them base64)`;
}

function describeInvocation(inv: any): string {
  const lines = [`Invocation ${inv.id}: ${inv.status}`];
  if (inv.error_message) lines.push(`  ${inv.error_message}`);
  if (inv.response_status !== undefined) {
    lines.push(`HTTP ${inv.response_status}`);
    for (const [name, value] of Object.entries(inv.response_headers ?? {})) lines.push(`${name}: ${value}`);
    const body = printable(inv.response_body ?? '');
    lines.push('', body);
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

async function projectAndFunctions(api: ApiClient, projectId: string) {
  const project = await api.call<ProjectView>('GET', `/api/v1/projects/${encodeURIComponent(projectId)}`);
  const { functions } = await api.call<{ functions: FunctionView[] }>('GET', `/api/v1/projects/${encodeURIComponent(projectId)}/functions`);
  return { project, functions };
}

/** Polls an invocation to its end, backing off to one poll in 3 s (the door's 20 a minute per address); exit 1 unless it completed. */
async function waitForInvocation(baseUrl: string, pollPath: string, id: string, json: boolean | undefined): Promise<number> {
  const frames = ['|', '/', '-', '\\'];
  const spin = interactive() && !json;
  let frame = 0;
  const spinner = spin ? setInterval(() => process.stderr.write(`\r${frames[frame++ % frames.length]} waiting for ${id}`), 120) : null;
  let inv: any;
  try {
    for (let delay = 200; ; delay = Math.min(3000, delay * 2)) {
      await sleep(delay);
      inv = await publicCall(baseUrl, 'GET', pollPath);
      if (TERMINAL.has(inv.status)) break;
    }
  } finally {
    if (spinner) {
      clearInterval(spinner);
      process.stderr.write('\r\x1b[K');
    }
  }
  process.stdout.write(json ? `${JSON.stringify(inv, null, 2)}\n` : describeInvocation(inv));
  return inv.status === 'completed' ? 0 : 1;
}

/** `functions [list]`: the live functions, their URLs, the queued door's address, and each schedule with its next run. */
async function listFunctions(args: string[]): Promise<number> {
  const { values: o } = parse(args, { project: { type: 'string' }, json: { type: 'boolean' } }, 0);
  const api = client();
  const { project, functions } = await projectAndFunctions(api, projectOf(o.project, api));
  const rows = functions.map((f) => ({
    name: f.name,
    url: f.url,
    invoke_url: `${api.baseUrl}/api/v1/public/functions/${project.subdomain}/${f.name}`,
    schedule: f.schedule ?? null,
    next_run_at: f.next_run_at ?? null,
  }));
  if (o.json) {
    process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    return 0;
  }
  if (rows.length === 0) {
    process.stdout.write('This project has no functions live. Put .js or .ts files in functions/ and deploy.\n');
    return 0;
  }
  const table = [
    ['NAME', 'URL', 'QUEUED INVOKE (POST)', 'SCHEDULE (UTC)', 'NEXT RUN'],
    ...rows.map((r) => [r.name, r.url, r.invoke_url, r.schedule ?? '-', r.next_run_at ?? '-']),
  ];
  process.stdout.write(`${tableLines(table).join('\n')}\n`);
  return 0;
}

/** `functions run NAME`: run now (team admins), a queued invocation with trigger `manual`; --wait polls it to the end. */
async function runFunctionNow(args: string[]): Promise<number> {
  const { values: o, positionals } = parse(
    args,
    { project: { type: 'string' }, data: { type: 'string' }, wait: { type: 'boolean' }, json: { type: 'boolean' } },
    1,
  );
  const name = positionals[0];
  if (!name) throw new UsageError('Name the function: slipway functions run NAME');
  const api = client();
  const projectId = projectOf(o.project, api);
  const { body, contentType } = requestBody(o.data);
  const started = await api.call<{ invocation_id: string; status: string; poll_url: string }>(
    'POST',
    `/api/v1/projects/${encodeURIComponent(projectId)}/functions/${encodeURIComponent(name)}/runs`,
    body ? { body: () => ({ body, headers: { 'content-type': contentType ?? 'application/octet-stream' } }) } : {},
  );
  if (o.wait) return waitForInvocation(api.baseUrl, started.poll_url, started.invocation_id, o.json);
  if (o.json) process.stdout.write(`${JSON.stringify(started, null, 2)}\n`);
  else {
    process.stdout.write(
      `Started run ${started.invocation_id} of ${name}.\nPoll: ${api.baseUrl}${started.poll_url}\n` +
        `Wait for its result: slipway invoke ${name} --poll ${started.invocation_id}${o.project ? ` --project ${o.project}` : ''}\n`,
    );
  }
  return 0;
}

export const functionCommands: Record<string, { usage: string; run: (args: string[]) => Promise<number> }> = {
  functions: {
    usage: 'functions [list] [--project ID] [--json] | functions run NAME [--project ID] [--data @FILE|TEXT] [--wait] [--json]',
    run: async (args) => (args[0] === 'run' ? runFunctionNow(args.slice(1)) : listFunctions(args[0] === 'list' ? args.slice(1) : args)),
  },

  invoke: {
    usage: 'invoke NAME [--project ID] [--data @FILE|TEXT] [--wait] [--poll INVOCATION_ID] [--json]',
    run: async (args) => {
      const { values: o, positionals } = parse(
        args,
        {
          project: { type: 'string' },
          data: { type: 'string' },
          wait: { type: 'boolean' },
          poll: { type: 'string' },
          json: { type: 'boolean' },
        },
        1,
      );
      const name = positionals[0];
      if (!name) throw new UsageError('Name the function: slipway invoke NAME');
      if (o.poll !== undefined && o.data !== undefined) throw new UsageError('--poll follows a call already made; it sends no --data.');
      const api = client();
      const project = await api.call<ProjectView>('GET', `/api/v1/projects/${encodeURIComponent(projectOf(o.project, api))}`);
      const door = `/api/v1/public/functions/${encodeURIComponent(project.subdomain)}/${encodeURIComponent(name)}`;
      if (o.poll !== undefined) return waitForInvocation(api.baseUrl, `${door}/invocations/${encodeURIComponent(o.poll)}`, o.poll, o.json);
      const queued = await publicCall(api.baseUrl, 'POST', door, requestBody(o.data));
      if (o.wait) return waitForInvocation(api.baseUrl, queued.poll_url, queued.invocation_id, o.json);
      if (o.json) process.stdout.write(`${JSON.stringify(queued, null, 2)}\n`);
      else {
        // The hint follows this call: `--wait` would queue another one.
        process.stdout.write(
          `Queued invocation ${queued.invocation_id}.\nPoll: ${api.baseUrl}${queued.poll_url}\n` +
            `Wait for its result: slipway invoke ${name} --poll ${queued.invocation_id}${o.project ? ` --project ${o.project}` : ''}\n`,
        );
      }
      return 0;
    },
  },

  logs: {
    usage:
      'logs NAME INVOCATION_ID [--project ID] [--json] | logs NAME --follow [--project ID] [--json] | logs --build DEPLOYMENT_ID [--follow] [--project ID] [--json]',
    run: async (args) => {
      const { values: o, positionals } = parse(
        args,
        { project: { type: 'string' }, json: { type: 'boolean' }, build: { type: 'string' }, follow: { type: 'boolean' } },
        2,
      );
      const api = client();
      if (o.build) return printBuildLog(api, projectOf(o.project, api), o.build, { follow: o.follow, json: o.json });
      const [name, id] = positionals;
      if (name && !id && o.follow) return followFunctionTail(api, projectOf(o.project, api), name, Boolean(o.json));
      if (!name || !id)
        throw new UsageError('Usage: slipway logs NAME INVOCATION_ID, slipway logs NAME --follow, or slipway logs --build DEPLOYMENT_ID');
      const projectId = projectOf(o.project, api);
      const inv = await api.call<any>(
        'GET',
        `/api/v1/projects/${encodeURIComponent(projectId)}/functions/${encodeURIComponent(name)}/invocations/${encodeURIComponent(id)}`,
      );
      if (o.json) {
        process.stdout.write(`${JSON.stringify(inv.console, null, 2)}\n`);
        return 0;
      }
      const lines = (inv.console as { at: string; stream: string; line: string }[]).map((l) => `${l.at} ${l.stream.padEnd(6)} ${l.line}`);
      process.stdout.write(lines.length > 0 ? `${lines.join('\n')}\n` : `No console output (invocation ${inv.status}).\n`);
      return 0;
    },
  },
};

export const functionUsage = Object.values(functionCommands)
  .map((c) => `  ${c.usage}`)
  .join('\n');
