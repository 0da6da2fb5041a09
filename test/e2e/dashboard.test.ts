import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { createUser } from '../../lib/users/user-records.ts';
import { getMembership, putMembership } from '../../lib/teams/membership-records.ts';
import { setFunctionsEnrolment } from '../../lib/teams/standing.ts';
import { dropFolder, expectAccessible, launchChromium, saveScreenshot } from '../support/browser.ts';
import { startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { scaled } from '../support/wait.ts';
import { githubPushPayload, sendGithub } from '../support/webhooks.ts';

/**
 * The console end to end: Debian's Chromium, driven by playwright-core,
 * against a whole local platform (the console on app.localhost, its API on the
 * same origin, the queue workers and the functions sandbox). The flows run in
 * order on one team, as a person would go through them; each saves a
 * screenshot under test/.out/dashboard and checks the page with axe-core.
 */
let platform: TestPlatform;
let browser: Browser;
let owner: BrowserContext;
let page: Page;
let work: string;
const email = `owner-${Date.now()}@example.test`;
const state: { teamId?: string; projectId?: string; siteUrl?: string; firstDeployment?: string } = {};

function siteFolder(name: string, heading: string, extra: Record<string, string> = {}): string {
  const dir = join(work, name);
  mkdirSync(join(dir, 'functions'), { recursive: true });
  for (const [file, text] of Object.entries(extra)) writeFileSync(join(dir, file), text);
  writeFileSync(
    join(dir, 'index.html'),
    `<!doctype html><html lang="en"><head><title>${heading}</title></head><body><h1>${heading}</h1></body></html>`,
  );
  writeFileSync(
    join(dir, 'about.html'),
    '<!doctype html><html lang="en"><head><title>About</title></head><body><p>About us</p></body></html>',
  );
  writeFileSync(
    join(dir, 'functions', 'hello.js'),
    [
      // A schedule that runs once a year: the page shows it with its next run; no tick comes during the test.
      "export const config = { schedule: '@yearly' };",
      'export default async (request) => {',
      '  const body = await request.text();',
      "  console.log('hello from the console test', body);",
      "  return new Response('hi ' + body);",
      '};',
      '',
    ].join('\n'),
  );
  return dir;
}

/** Asks for a sign-in link with the keyboard alone: Tab to the address field, type, Enter. */
async function signIn(context: BrowserContext, address: string): Promise<Page> {
  const p = await context.newPage();
  await p.goto(`${platform.consoleUrl}/`);
  await p.getByRole('heading', { name: 'Sign in' }).waitFor();
  for (let tabs = 0; tabs < 10 && !(await p.evaluate('document.activeElement?.type === "email"')); tabs++) await p.keyboard.press('Tab');
  await p.keyboard.type(address);
  await p.keyboard.press('Enter');
  await p.getByText(`A sign-in link is on its way to ${address}`).waitFor();
  return p;
}

/** A page of a site, asked of the platform on loopback with the site's Host (Node resolves no *.localhost name). */
function siteText(url: string): Promise<string> {
  const { host, pathname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path: pathname, headers: { host } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    }).on('error', reject);
  });
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'slipway-console-'));
  platform = await startTestPlatform();
  browser = await launchChromium();
  owner = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  // The clipboard of the copy buttons, in a headless browser.
  await owner.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: platform.consoleUrl });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await platform?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** The page a flow works in: what a failed flow's screenshot shows. */
let current: Page | undefined;
const failedShots = () =>
  onTestFailed(async ({ task }) => {
    if (current && !current.isClosed()) await saveScreenshot(current, `failed-${task.name.replace(/[^a-z0-9]+/gi, '-')}`);
  });

// A case's budget holds its longest wait for a state (a publish or a queued run: up to 60 s on a busy machine).
describe('the console in a real browser', { timeout: scaled(90_000) }, () => {
  it('signs in by the e-mail link (the local outbox lists it)', async () => {
    page = await signIn(owner, email);
    await expectAccessible(page, 'sign-in');
    await page.getByRole('link', { name: 'local outbox' }).click();
    await page.getByRole('heading', { name: 'Local outbox' }).waitFor();
    await page
      .getByRole('link', { name: `Sign in as ${email}` })
      .first()
      .click();
    await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
    expect(page.url()).toBe(`${platform.consoleUrl}/`);
    // The session is an HttpOnly cookie: no script on the page can read it.
    expect(await page.evaluate('document.cookie')).toBe('');
    const [cookie] = await owner.cookies();
    expect(cookie).toMatchObject({ name: 'slipway_session', httpOnly: true, sameSite: 'Lax' });
    await expectAccessible(page, 'projects');
    await saveScreenshot(page, '01-signed-in');
    // Asked by the page itself: its cookie goes along, and Node resolves no *.localhost name.
    state.teamId = (
      (await page.evaluate('fetch("/api/v1/me").then((r) => r.json())')) as { data: { default_team_id: string } }
    ).data.default_team_id;
    await setFunctionsEnrolment(state.teamId!, true);
  });

  it('creates a project by dropping a folder and sees it live', async () => {
    await page.getByRole('link', { name: 'New project' }).click();
    await page.getByLabel('Project name').fill('Console site');
    await expectAccessible(page, 'new project');
    await dropFolder(page, '[data-testid="drop-zone"]', siteFolder('v1', 'Version one'));
    await page.getByRole('link', { name: 'Deployments', exact: true }).waitFor({ timeout: 60_000 });
    state.projectId = new URL(page.url()).pathname.split('/')[2];
    const production = page.getByRole('link', { name: /^http:\/\/console-site.*\.localhost:\d+$/ });
    state.siteUrl = (await production.getAttribute('href'))!;
    expect(await siteText(state.siteUrl)).toContain('<h1>Version one</h1>');
    await page.getByRole('cell', { name: 'ready' }).first().waitFor();
    state.firstDeployment = await page.locator('tbody tr').first().getByRole('link').innerText();
    await expectAccessible(page, 'project');
    await saveScreenshot(page, '02-project-live');
  });

  it('deploys a second version and rolls back to the first', async () => {
    current = page;
    failedShots();
    // With serving rules, one line of which is not a rule: the next flow reads them on the deployment's page.
    const rules = {
      _redirects: '/old /about 301\n/* /index.html 200\n/teapot /index.html 418\n',
      _headers: '/*\n  X-Frame-Options: DENY\n',
    };
    await dropFolder(page, '[data-testid="drop-zone"]', siteFolder('v2', 'Version two', rules));
    await page.getByRole('status').filter({ hasText: 'Published' }).waitFor({ timeout: 60_000 });
    await expect.poll(() => siteText(state.siteUrl!), { timeout: 10_000 }).toContain('<h1>Version two</h1>');
    await page.getByRole('button', { name: `Roll back to ${state.firstDeployment}` }).click();
    await expect.poll(() => siteText(state.siteUrl!), { timeout: 10_000 }).toContain('<h1>Version one</h1>');
    await page.locator('tbody tr', { hasText: state.firstDeployment! }).getByText('live').waitFor();
    await saveScreenshot(page, '03-rolled-back');
  });

  it("shows a deployment's serving rules and each line publishing skipped", async () => {
    current = page;
    failedShots();
    await page.locator('tbody tr').filter({ hasNotText: state.firstDeployment! }).first().getByRole('link').click();
    const rules = page.getByRole('region', { name: 'Serving rules' });
    await rules.waitFor();
    await rules.getByText('2 rules from _redirects, 1 path from _headers; 1 line skipped.').waitFor();
    const skipped = rules.getByRole('table', { name: 'Skipped lines' });
    expect(await skipped.locator('tbody tr').allInnerTexts()).toEqual([
      '_redirects\t3\t418 is not a status of a rule (200, 301, 302, 303, 307, 308 or 404, with an optional !)',
    ]);
    await expectAccessible(page, 'deployment');
    await saveScreenshot(page, '03b-serving-rules');
    await page.getByRole('link', { name: 'Deployments', exact: true }).click();
    await page.locator('tbody tr').first().waitFor();
  });

  it('shows the newest 20 deployments and older ones on "Show older"', async () => {
    current = page;
    failedShots();
    // Twenty pushes with [skip ci] record twenty skipped deployments at once (22 in all), through the page's own session.
    const call = (method: string, path: string, body?: unknown) =>
      page.evaluate(
        async ([method, path, body, team]) => {
          const headers = {
            accept: 'application/json',
            'content-type': 'application/json',
            'x-platform-client': 'dashboard',
            'x-team-id': team,
          };
          return (await fetch(`/api/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })).json();
        },
        [method, path, body, state.teamId!] as const,
      );
    const repoUrl = 'https://git.example.test/acme/console.git';
    await call('PATCH', `/projects/${state.projectId}`, { git_repo_url: repoUrl, default_branch: 'main', auto_deploy_enabled: true });
    const { data } = (await call('POST', `/projects/${state.projectId}/git/webhook-secret`)) as { data: { secret: string } };
    for (let i = 0; i < 20; i++) {
      const payload = githubPushPayload({
        repoUrl,
        branch: 'main',
        sha: (i + 1).toString(16).padStart(40, 'a'),
        message: `Docs ${i} [skip ci]`,
      });
      expect((await sendGithub(platform, { event: 'push', secret: data.secret, payload })).status).toBe(202);
    }
    await page.reload();
    const rows = page.locator('tbody tr');
    await page.getByRole('button', { name: 'Show older (2 more)' }).waitFor();
    expect(await rows.count()).toBe(20);
    await page.getByRole('button', { name: 'Show older (2 more)' }).click();
    // The second page is read through the API: on a loaded machine that takes longer than expect.poll's 1 s default.
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(22);
    await rows.filter({ hasText: state.firstDeployment! }).getByText('live').waitFor();
    expect(await page.getByRole('button', { name: /^Show older/ }).count()).toBe(0);
  });

  it('"Choose a folder" picks a folder: a nested file is published at its path; a flattened one is refused with the reason', async () => {
    current = page;
    failedShots();
    const dir = siteFolder('picked', 'Picked folder');
    mkdirSync(join(dir, 'assets', 'js'), { recursive: true });
    writeFileSync(join(dir, 'assets', 'js', 'app.js'), 'console.log("nested app")');
    writeFileSync(
      join(dir, 'index.html'),
      '<!doctype html><html lang="en"><head><title>Picked</title><script type="module" src="/assets/js/app.js"></script></head><body><h1>Picked folder</h1></body></html>',
    );
    const picker = page.locator('[data-testid="drop-zone"] input[type="file"]');
    expect(await picker.evaluate((input) => (input as { webkitdirectory?: boolean }).webkitdirectory)).toBe(true);
    // Out of the functions beta for this deploy: the page says its functions will not answer yet.
    await setFunctionsEnrolment(state.teamId!, false);
    await picker.setInputFiles(dir);
    await page.getByRole('status').filter({ hasText: 'Published' }).waitFor({ timeout: 60_000 });
    await page
      .getByRole('status')
      .filter({
        hasText:
          'These functions are deployed but answer only once your team is enrolled in the functions beta (until then their URLs answer 404). Ask the platform operator to enroll the team.',
      })
      .waitFor();
    await setFunctionsEnrolment(state.teamId!, true);
    await expect.poll(() => siteText(state.siteUrl!), { timeout: 10_000 }).toContain('<h1>Picked folder</h1>');
    expect(await siteText(`${state.siteUrl}/assets/js/app.js`)).toBe('console.log("nested app")');
    // The same site with its script beside index.html instead of under assets/js/: nothing is sent.
    const flat = join(work, 'flat');
    mkdirSync(flat);
    writeFileSync(join(flat, 'index.html'), readFileSync(join(dir, 'index.html'), 'utf8').replace('Picked folder', 'Flattened'));
    writeFileSync(join(flat, 'app.js'), 'console.log("flat")');
    await picker.setInputFiles(flat);
    await page
      .getByText(
        'index.html loads files this upload does not have (assets/js/app.js), so the page would be blank. Deploy the whole folder index.html was built in, with its subfolders (dist/ for Vite).',
      )
      .waitFor();
    expect(await siteText(state.siteUrl!)).toContain('<h1>Picked folder</h1>');
    await saveScreenshot(page, '03b-folder-picked');
  });

  it('adds a domain and reads the DNS records to set, with copy buttons', async () => {
    await page.getByRole('link', { name: 'Domains' }).click();
    await page.getByLabel('Domain', { exact: true }).fill('shop.console-test.com');
    await page.getByRole('button', { name: 'Add domain' }).click();
    await page.getByRole('heading', { name: 'shop.console-test.com', level: 1 }).waitFor();
    await page.getByRole('heading', { name: 'DNS records to set' }).waitFor();
    const rows = page.locator('tbody tr');
    expect(await rows.count()).toBeGreaterThan(0);
    await expect.poll(() => page.getByText('pending verification').count()).toBeGreaterThan(0);
    const copy = page.getByRole('button', { name: /^Copy (CNAME|TXT) value$/ }).first();
    await copy.click();
    await page.getByRole('status').filter({ hasText: 'Copied' }).first().waitFor();
    await expectAccessible(page, 'domain');
    await saveScreenshot(page, '04-domain-records');
    await page.getByRole('link', { name: "Back to the project's domains" }).click();
  });

  it("shows a function's schedule and next run, runs a queued invocation and reads its console output", async () => {
    await page.getByRole('link', { name: 'Functions' }).click();
    await page.getByRole('heading', { name: 'hello', level: 3 }).waitFor();
    await expect(page.getByTestId('schedule').innerText()).resolves.toMatch(/^Runs on @yearly \(UTC\) · next run \S/);
    await page.getByLabel('Request body for hello').fill('{"from":"the console"}');
    await page.getByRole('button', { name: 'Run as a queued invocation' }).click();
    await page.getByText('Status: completed').waitFor({ timeout: 60_000 });
    await expect.poll(() => page.getByTestId('console-output').innerText()).toContain('hello from the console test {"from":"the console"}');
    await page.getByText('hi {"from":"the console"}').waitFor();
    await expectAccessible(page, 'invocation');
    await saveScreenshot(page, '05-invocation-console');
  });

  it('imports environment variables from .env text and never shows their values', async () => {
    await page.goto(`${platform.consoleUrl}/projects/${state.projectId}/env`);
    await page
      .getByLabel('Contents of a .env file')
      .fill('# build settings\nAPI_URL=https://api.example.test\nSECRET_TOKEN=s3cr3t-value\n');
    await page.getByRole('button', { name: 'Import into production' }).click();
    await page.getByText('Imported into production: 2 created').waitFor();
    await page.getByRole('cell', { name: 'SECRET_TOKEN' }).waitFor();
    await page.getByRole('cell', { name: 'API_URL' }).waitFor();
    expect(await page.content()).not.toContain('s3cr3t-value');
    await expectAccessible(page, 'environment');
    await saveScreenshot(page, '06-env-imported');
  });

  it("connects a repository in Settings: the webhook URL, a secret shown once and rotated, and auto-deploy's state", async () => {
    current = page;
    failedShots();
    const repoUrl = 'https://git.example.test/acme/console-site.git';
    await page.goto(`${platform.consoleUrl}/projects/${state.projectId}/settings`);
    await page.getByLabel('Repository URL').fill(repoUrl);
    await page.getByLabel('Deploy pushes automatically').check();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    await page.getByRole('heading', { name: 'Git webhook' }).waitFor();
    await page.getByText(`${platform.consoleUrl}/api/v1/webhooks/git/github`, { exact: true }).waitFor();
    await page.getByText(`${platform.consoleUrl}/api/v1/webhooks/git/gitlab`, { exact: true }).waitFor();
    expect(await page.getByTestId('auto-deploy-state').innerText()).toBe(
      // The project's default branch is known by now (main), so the page names it.
      'Auto-deploy is on: a push to main goes live.',
    );
    await page.getByRole('button', { name: 'Make a webhook secret' }).click();
    const shown = page.getByLabel('New webhook secret, shown this once');
    await shown.waitFor();
    const first = await shown.inputValue();
    await page.getByRole('button', { name: 'Rotate the webhook secret' }).click();
    // Polled from here: a string predicate of waitForFunction needs eval, which the console's script-src 'self' refuses.
    await expect.poll(() => shown.inputValue()).not.toBe(first);
    const second = await shown.inputValue();
    // The secret shown is the one deliveries are checked against: the rotated one matches, the first no longer does.
    const ping = (secret: string) =>
      sendGithub(platform, { event: 'ping', secret, payload: { zen: 'Keep it simple.', repository: { clone_url: repoUrl } } });
    expect((await ping(second)).status).toBe(202);
    expect((await ping(first)).status).toBe(401);
    await expectAccessible(page, 'settings with webhook');
    await saveScreenshot(page, '06b-git-webhook');
  });

  it('transfers ownership to another member', async () => {
    const colleague = await createUser({ email: `colleague-${Date.now()}@example.test`, name: 'Colleague' });
    await putMembership(state.teamId!, colleague.user_id, 'member');
    await page.getByRole('link', { name: 'Team', exact: true }).click();
    await page.getByRole('heading', { name: 'Transfer ownership' }).waitFor();
    await page.getByLabel('New owner').selectOption(colleague.user_id);
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Transfer ownership' }).click();
    await page.getByRole('heading', { name: 'Transfer ownership' }).waitFor({ state: 'detached' });
    expect((await getMembership(state.teamId!, colleague.user_id))?.role).toBe('owner');
    await page.getByRole('combobox', { name: 'Team' }).locator('option', { hasText: '(admin)' }).waitFor({ state: 'attached' });
    await expectAccessible(page, 'team');
    await saveScreenshot(page, '07-ownership-transferred');
  });

  it('passes the accessibility check on every other page', async () => {
    current = page;
    failedShots();
    const pages: [string, string | RegExp][] = [
      [`/projects/${state.projectId}/functions`, 'Functions'],
      [`/projects/${state.projectId}/analytics`, 'Analytics'],
      [`/projects/${state.projectId}/domains`, 'Domains'],
      [`/projects/${state.projectId}/settings`, 'Settings'],
      ['/account', 'Notices'],
      ['/invitations', 'Invitations'],
    ];
    for (const [path, heading] of pages) {
      await page.goto(`${platform.consoleUrl}${path}`);
      await page.getByRole('heading', { name: heading }).first().waitFor();
      await expectAccessible(page, path);
    }
    await saveScreenshot(page, '08-every-page');
    // Six page loads with an axe run each: more than one flow's time on a loaded machine.
  }, 120_000);

  it('files an abuse report signed out', async () => {
    const visitor = await browser.newContext();
    const p = await visitor.newPage();
    current = p;
    failedShots();
    await p.goto(`${platform.consoleUrl}/report-abuse`);
    await expectAccessible(p, 'abuse report');
    await p.getByLabel('What is it').selectOption('phishing');
    // An address the platform does not host is named next to the field.
    await p.getByLabel('Addresses of the content (one per line)').fill('https://elsewhere.example.org/login');
    await p.getByLabel('Why it is illegal or against the rules').fill('It imitates a bank sign-in page.');
    await p.getByLabel('Your name').fill('Vera Visitor');
    await p.getByLabel('Your e-mail address').fill('vera@example.test');
    await p.getByLabel('I declare that this report is accurate and made in good faith').check();
    await p.getByRole('button', { name: 'Send the report' }).click();
    await p.getByText('Not on a site or function this platform hosts: https://elsewhere.example.org/login.').waitFor();
    await expectAccessible(p, 'abuse report with errors');
    await p.getByLabel('Addresses of the content (one per line)').fill(`${state.siteUrl}/about.html`);
    await p.getByRole('button', { name: 'Send the report' }).click();
    await p.getByRole('heading', { name: 'Report received' }).waitFor();
    await saveScreenshot(p, '09-abuse-report-filed');
    await visitor.close();
  });

  // Sign-in, two pages and a review form in the browser: over 30 s on a loaded CI machine (seen twice).
  it('reviews the reported site as a platform administrator', async () => {
    const adminEmail = `admin-${Date.now()}@example.test`;
    await createUser({ email: adminEmail, name: 'Platform Admin', isPlatformAdmin: true });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const p = await signIn(context, adminEmail);
    current = p;
    failedShots();
    await p.goto(`${platform.consoleUrl}/_local/outbox`);
    await p
      .getByRole('link', { name: `Sign in as ${adminEmail}` })
      .first()
      .click();
    await p.getByRole('link', { name: 'Admin' }).click();
    const host = new URL(state.siteUrl!).hostname;
    const card = p.locator('li.card', { hasText: host });
    // The keyword scan of the publish is queued at finalize and finished by the abuse-scans worker. Each
    // try reloads the page and waits for its list to load: switching the filter back and forth instead
    // superseded every listing that took longer than the poll's interval (a loaded machine), so none showed.
    await expect
      .poll(
        async () => {
          await p.reload();
          await p.getByText(/^\d+ scans\.$/).waitFor({ timeout: 20_000 });
          return card.count();
        },
        { timeout: 45_000 },
      )
      .toBeGreaterThan(0);
    await card.getByText('1 abuse report').first().waitFor();
    await expectAccessible(p, 'admin');
    await saveScreenshot(p, '10-admin-review');
    await card.first().getByLabel(`Resolution for ${host}`).fill('Phishing confirmed; site taken down.');
    await card
      .first()
      .getByRole('button', { name: `Mark ${host} actioned` })
      .click();
    await p.getByLabel('Show').selectOption('actioned');
    await p.locator('li.card', { hasText: host }).first().waitFor();
    await context.close();
  }, 90_000);
});
