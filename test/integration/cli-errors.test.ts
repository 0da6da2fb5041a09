import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOT_ENROLLED } from '../../lib/cli/sites.ts';
import { setFunctionsEnrolment } from '../../lib/teams/standing.ts';
import { freshConfigHome, runCli } from '../support/cli.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';

/**
 * What the CLI says when something is refused: the details of an API error in words, a page whose
 * assets are missing, functions of a team outside the beta, a non-JSON --data, a flag it does not know.
 */
let platform: TestPlatform;
let m: Awaited<ReturnType<typeof makeTeamWithRoles>>;
let env: Record<string, string>;

function folder(files: Record<string, string | Buffer>): string {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-cli-errors-'));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return dir;
}

beforeAll(async () => {
  platform = await startTestPlatform();
  m = await makeTeamWithRoles();
  env = { SLIPWAY_API_URL: platform.baseUrl, SLIPWAY_TOKEN: m.apiKey.token, XDG_CONFIG_HOME: freshConfigHome() };
});
afterAll(() => platform?.stop());

describe('the CLI says why', { timeout: 60_000 }, () => {
  it("prints an error's details in words: the file and the limit", async () => {
    const dir = folder({ 'index.html': '<h1>video</h1>', 'video.bin': Buffer.alloc(10 * 1024 * 1024 + 1) });
    const run = await runCli(['deploy', dir, '--json'], env);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(
      'slipway: The file manifest is invalid. (INVALID_MANIFEST)\n  video.bin: size is over 10 MiB (10485760 bytes), the largest file accepted\n',
    );
  });

  it('refuses a folder whose index.html loads files it does not hold, before anything is sent', async () => {
    const dir = folder({
      'index.html': '<script type="module" src="/assets/index-abc.js"></script><link rel="stylesheet" href="/assets/index.css">',
      'index-abc.js': 'console.log(1)',
      'index.css': 'body{}',
    });
    const name = `flat-${randomBytes(3).toString('hex')}`;
    const run = await runCli(['deploy', dir, '--name', name], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      'slipway: index.html loads files this upload does not have (assets/index-abc.js, assets/index.css), so the page would be blank. ' +
        'Deploy the whole folder index.html was built in, with its subfolders (dist/ for Vite).\n',
    );
    const listed = await platform.api('GET', '/api/v1/projects', { token: m.apiKey.token });
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body.data)).not.toContain(name);
  });

  it('says that functions answer only once the team is in the functions beta; then --data that is not JSON is sent as text', async () => {
    const subdomain = `errs-${randomBytes(4).toString('hex')}`;
    const dir = folder({
      'index.html': '<h1>echo</h1>',
      'functions/echo.js':
        'export default async (request) => new Response(`${request.headers.get("content-type")}|${await request.text()}`);\n',
    });
    const run = await runCli(['deploy', dir, '--subdomain', subdomain], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`Functions:\n  echo  http://echo-${subdomain}.fn.localhost:${platform.port}/\n${NOT_ENROLLED}\n`);
    const json = await runCli(['deploy', dir, '--json'], env);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ functions_beta_enrolled: false });
    expect(json.stderr).toContain(`${NOT_ENROLLED}\n`);

    await setFunctionsEnrolment(m.team.id, true);
    const enrolled = await runCli(['deploy', dir], env);
    expect(enrolled.stdout).not.toContain(NOT_ENROLLED);
    const invoked = await runCli(['invoke', 'echo', '--data', 'not {json', '--wait', '--json'], { ...env }, { cwd: dir });
    expect(invoked.code, invoked.stderr).toBe(0);
    const result = JSON.parse(invoked.stdout);
    expect(Buffer.from(result.response_body, 'base64').toString()).toBe('text/plain; charset=utf-8|not {json');
  });

  it('an unknown flag, a flag without its value, an extra argument: our sentence, exit 2', async () => {
    const unknown = await runCli(['deploy', '--bogus'], env);
    expect(unknown).toMatchObject({
      code: 2,
      stdout: '',
      stderr: 'slipway: There is no --bogus flag. Run slipway deploy --help for its flags.\n',
    });
    const noValue = await runCli(['dev', '--port'], env);
    expect(noValue).toMatchObject({ code: 2, stderr: 'slipway: --port needs a value. Run slipway dev --help for its flags.\n' });
    const extra = await runCli(['projects', 'extra'], env);
    expect(extra).toMatchObject({ code: 2, stderr: 'slipway: Unexpected argument extra. Run slipway projects --help for its flags.\n' });
  });
});
