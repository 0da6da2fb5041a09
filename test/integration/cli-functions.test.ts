import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INVOCATION_ERRORS } from '../../lib/functions/invocations.ts';
import { setFunctionsEnrolment } from '../../lib/teams/standing.ts';
import { spawn } from 'node:child_process';
import { cliEntry, freshConfigHome, runCli } from '../support/cli.ts';
import { doorRequest, functionHostname } from '../support/door.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { deploy, site } from '../support/uploads.ts';

/** `slipway functions`, `slipway invoke` (with and without --wait) and `slipway logs` against the running platform. */
process.env.FUNCTIONS_QUEUED_RATE_PER_MINUTE = '100000';
// A tail opened is seen by the door within this.
process.env.FUNCTIONS_TAIL_CACHE_MS = '200';

let platform: TestPlatform;
let env: Record<string, string>;
let projectId: string;
let subdomain: string;

beforeAll(async () => {
  platform = await startTestPlatform();
  const roles = await makeTeamWithRoles();
  await setFunctionsEnrolment(roles.team.id, true);
  subdomain = `cli-${randomBytes(3).toString('hex')}`;
  const deployed = await deploy(
    platform,
    roles.owner.token,
    site({
      'index.html': '<h1>cli</h1>',
      'functions/echo.js': `export default async (request) => { const body = await request.text(); console.log('got', body); return new Response('echo:' + body, { headers: { 'x-echo': '1' } }); };`,
      'functions/broken.js': `export const config = { schedule: '@yearly' };\nexport default () => { console.error('broken on purpose'); throw new Error('nope'); };`,
    }),
    { name: `Cli ${subdomain}`, subdomain },
  );
  projectId = deployed.begin.project_id;
  env = {
    SLIPWAY_API_URL: platform.baseUrl,
    SLIPWAY_TOKEN: roles.apiKey.token,
    XDG_CONFIG_HOME: freshConfigHome(),
    FUNCTIONS_QUEUED_RATE_PER_MINUTE: '100000',
  };
}, 120_000);
afterAll(() => platform?.stop());

describe('functions CLI', { timeout: 60_000 }, () => {
  it('slipway functions lists the functions with their URLs and queued invoke URLs', async () => {
    const run = await runCli(['functions', '--project', projectId], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`http://echo-${subdomain}.fn.localhost:${platform.port}/`);
    expect(run.stdout).toContain(`${platform.baseUrl}/api/v1/public/functions/${subdomain}/broken`);
    const json = JSON.parse((await runCli(['functions', '--project', projectId, '--json'], env)).stdout);
    expect(json.map((f: { name: string }) => f.name)).toEqual(['broken', 'echo']);
    const nextYear = `${new Date().getUTCFullYear() + 1}-01-01T00:00:00.000Z`;
    expect(json.map((f: { schedule: string | null; next_run_at: string | null }) => [f.schedule, f.next_run_at])).toEqual([
      ['@yearly', nextYear],
      [null, null],
    ]);
    const list = await runCli(['functions', 'list', '--project', projectId], env);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/SCHEDULE \(UTC\)\s+NEXT RUN/);
    expect(list.stdout).toMatch(new RegExp(`^broken\\s.*\\s@yearly\\s+${nextYear.replaceAll('.', '\\.')}$`, 'm'));
  });

  it('slipway functions run NAME runs it now (trigger manual); --wait prints its result', async () => {
    const waited = await runCli(['functions', 'run', 'echo', '--project', projectId, '--data', '{"now":1}', '--wait', '--json'], env);
    expect(waited.code, waited.stderr).toBe(0);
    const inv = JSON.parse(waited.stdout);
    expect(inv).toMatchObject({ status: 'completed', response_status: 200 });
    expect(Buffer.from(inv.response_body, 'base64').toString()).toBe('echo:{"now":1}');
    const started = await runCli(['functions', 'run', 'echo', '--project', projectId], env);
    expect(started.code, started.stderr).toBe(0);
    expect(started.stdout).toMatch(/^Started run [0-9a-f-]{36} of echo\.$/m);
  });

  it('slipway invoke --wait prints the result; without --wait it prints the invocation and its poll URL; logs prints the console', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'slipway-cli-fn-'));
    writeFileSync(join(dir, 'payload.json'), '{"from":"file"}');
    const waited = await runCli(['invoke', 'echo', '--project', projectId, '--data', `@${join(dir, 'payload.json')}`, '--wait'], env);
    expect(waited.code, waited.stderr).toBe(0);
    expect(waited.stdout).toContain(': completed');
    expect(waited.stdout).toContain('HTTP 200');
    expect(waited.stdout).toContain('x-echo: 1');
    expect(waited.stdout).toContain('echo:{"from":"file"}');

    const queued = await runCli(['invoke', 'echo', '--project', projectId, '--data', '{"a":1}', '--json'], env);
    expect(queued.code, queued.stderr).toBe(0);
    const { invocation_id, status, poll_url } = JSON.parse(queued.stdout);
    expect(status).toBe('pending');
    expect(poll_url).toContain(invocation_id);

    // The hint without --wait follows the call it made: `--poll ID` reads that invocation, it queues no new one.
    const hinted = await runCli(['invoke', 'echo', '--project', projectId, '--data', '{"b":2}'], env);
    expect(hinted.code, hinted.stderr).toBe(0);
    const hintedId = /^Queued invocation (\S+)\.$/m.exec(hinted.stdout)![1]!;
    const hint = /^Wait for its result: (slipway invoke .*)$/m.exec(hinted.stdout)![1]!;
    expect(hint).toBe(`slipway invoke echo --poll ${hintedId} --project ${projectId}`);
    const polled = await runCli([...hint.split(' ').slice(1), '--json'], env);
    expect(polled.code, polled.stderr).toBe(0);
    const polledInv = JSON.parse(polled.stdout);
    expect(polledInv).toMatchObject({ id: hintedId, status: 'completed', response_status: 200 });
    expect(Buffer.from(polledInv.response_body, 'base64').toString()).toBe('echo:{"b":2}');

    const failed = await runCli(['invoke', 'broken', '--project', projectId, '--wait', '--json'], env);
    expect(failed.code).toBe(1);
    const inv = JSON.parse(failed.stdout);
    expect(inv).toMatchObject({ status: 'failed', error_message: INVOCATION_ERRORS.handlerError });

    const logs = await runCli(['logs', 'broken', inv.id, '--project', projectId], env);
    expect(logs.code, logs.stderr).toBe(0);
    expect(logs.stdout).toMatch(/stderr\s+broken on purpose/);

    const unknown = await runCli(['invoke', 'nosuch', '--project', projectId], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('FUNCTION_NOT_FOUND');
  });

  it('slipway logs NAME --follow prints the live tail of HTTPS calls until Ctrl-C', async () => {
    const child = spawn(process.execPath, [cliEntry(), 'logs', 'broken', '--follow', '--project', projectId, '--json'], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    try {
      await expect.poll(() => stderr, { timeout: 30_000, interval: 50 }).toContain('Tailing broken: calls from now on (Ctrl-C to stop).');
      const reply = await doorRequest(platform.port, functionHostname(`broken-${subdomain}`, platform.port), '/');
      expect(reply.status).toBe(500);
      await expect.poll(() => stdout, { timeout: 20_000, interval: 50 }).toContain('"event":"call"');
      await expect.poll(() => stdout, { timeout: 20_000, interval: 50 }).toContain('broken on purpose');
      const events = stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(events).toContainEqual({ event: 'console', at: expect.any(String), stream: 'stderr', line: 'broken on purpose' });
      expect(events).toContainEqual({
        event: 'error',
        at: expect.any(String),
        message: 'nope',
        stack: expect.stringMatching(/^Error: nope\n/),
      });
      expect(events).toContainEqual({
        event: 'call',
        at: expect.any(String),
        method: 'GET',
        status: 500,
        duration_ms: expect.any(Number),
        outcome: 'handler_error',
      });
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
  });
});
