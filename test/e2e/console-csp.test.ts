import { request } from 'node:http';
import type { Browser, BrowserContext, ConsoleMessage } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/browser.ts';
import { signInByLink } from '../support/console.ts';
import { startTestPlatform, type TestPlatform } from '../support/platform.ts';

/**
 * The console's security headers (issue 39, item 5; docs/dashboard.md, "Security headers"): a
 * Content-Security-Policy with `frame-ancestors 'none'` and a script policy the console runs under
 * without a single violation, while an injected inline script does not run and no other origin may
 * frame it.
 */
let platform: TestPlatform;
let browser: Browser;
let context: BrowserContext;

beforeAll(async () => {
  platform = await startTestPlatform();
  browser = await launchChromium();
  context = await browser.newContext();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await platform?.stop();
});

/** A GET on the console's host (Node resolves no *.localhost name). */
function consoleGet(path: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: platform.port, path, headers: { host: new URL(platform.consoleUrl).host } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

const violationsOf = (messages: ConsoleMessage[]) => messages.map((m) => m.text()).filter((t) => /Content Security Policy/i.test(t));

describe("the console's Content-Security-Policy", () => {
  it('is sent with every page and file of the console, with framing refused', async () => {
    const index = await consoleGet('/');
    expect(index.status).toBe(200);
    const script = /<script type="module" src="([^"]+)"/.exec(index.text)![1]!;
    for (const path of ['/', '/projects/anything', script, '/_local/outbox', '/missing.png']) {
      const reply = await consoleGet(path);
      const policy = String(reply.headers['content-security-policy']);
      expect(policy, path).toContain("frame-ancestors 'none'");
      expect(policy, path).toContain("script-src 'self'");
      expect(policy, path).toContain("object-src 'none'");
      expect(policy, path).toContain("base-uri 'none'");
      expect(policy, path).not.toContain('unsafe-inline');
      expect(policy, path).not.toContain('unsafe-eval');
      expect(reply.headers['x-frame-options'], path).toBe('DENY');
      expect(reply.headers['x-content-type-options'], path).toBe('nosniff');
    }
  });

  it('fits the console: signed out and signed in it runs with no violation, and an injected inline handler never runs', async () => {
    const page = await context.newPage();
    const messages: ConsoleMessage[] = [];
    page.on('console', (m) => messages.push(m));
    await page.goto(`${platform.consoleUrl}/`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    const { cookie } = await signInByLink(platform, `csp-${Date.now()}@example.test`);
    const [name, value] = cookie.split(/=(.*)/s) as [string, string];
    await context.addCookies([{ name, value, url: platform.consoleUrl }]);
    await page.goto(`${platform.consoleUrl}/`);
    await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
    await page.goto(`${platform.consoleUrl}/team`);
    await page.waitForLoadState('networkidle');
    expect(violationsOf(messages)).toEqual([]);

    // What an XSS would put in the page: an inline event handler. The policy refuses to run it.
    await page.evaluate(`document.body.insertAdjacentHTML('beforeend', '<img src="/missing.png" onerror="window.__injected = true">')`);
    await page.waitForTimeout(500);
    expect(await page.evaluate('window.__injected === true')).toBe(false);
    expect(violationsOf(messages).join('\n')).toMatch(/script-src/);
    await page.close();
  });

  it('may not be framed by another origin', async () => {
    const page = await context.newPage();
    const messages: ConsoleMessage[] = [];
    page.on('console', (m) => messages.push(m));
    await page.setContent(`<iframe src="${platform.consoleUrl}/" width="400" height="300"></iframe>`);
    await expect.poll(() => violationsOf(messages).join('\n'), { timeout: 15_000 }).toMatch(/frame-ancestors 'none'/);
    // The frame holds no console: its document is not the console's.
    const frame = page.frames().find((f) => f !== page.mainFrame());
    expect(await frame?.evaluate('document.title').catch(() => null)).not.toBe('Slipway');
    await page.close();
  });
});
