import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { buildDashboard } from '../dashboard/build.mjs';
import { createSession } from '../lib/identity/credential-records.ts';
import { createUser } from '../lib/users/user-records.ts';
import { startLocalPlatform } from '../lib/local/platform.ts';
import { createTeam } from '../lib/teams/teams.ts';
import { launchChromium } from '../test/support/browser.ts';

/** Budgets of the console (issue: a small, fast client). */
const JS_GZIP_BUDGET = 100 * 1024;
const USABLE_BUDGET_MS = 1000;
const RUNS = 5;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * The console's first load in Debian's Chromium (launched as the platform's
 * capture driver launches it) against a local platform: the JavaScript it
 * loads, gzipped, and the time from navigation until the projects page is
 * usable (its list read from the API and shown), each run in a fresh browser
 * context (empty cache), signed in by the session cookie.
 */
export async function runDashboardBench(): Promise<void> {
  await buildDashboard({ quiet: true });
  const platform = await startLocalPlatform({ port: 0, prefix: `bench${randomBytes(4).toString('hex')}`, drivers: [] });
  const browser = await launchChromium();
  try {
    const user = await createUser({ email: `bench-${Date.now()}@example.test`, name: 'Bench' });
    await createTeam({ name: 'Bench team', ownerUserId: user.user_id });
    const token = await createSession(user.user_id);
    const times: number[] = [];
    let jsGzip = 0;
    let jsRaw = 0;
    for (let run = 0; run < RUNS; run++) {
      const context = await browser.newContext();
      await context.addCookies([{ name: 'slipway_session', value: token, url: platform.consoleUrl, httpOnly: true, sameSite: 'Lax' }]);
      const page = await context.newPage();
      const scripts: Promise<Buffer>[] = [];
      page.on('response', (response) => {
        if (response.request().resourceType() === 'script') scripts.push(response.body());
      });
      const started = performance.now();
      await page.goto(`${platform.consoleUrl}/`);
      await page.getByText('No projects yet').waitFor();
      times.push(performance.now() - started);
      if (run === 0) {
        const bodies = await Promise.all(scripts);
        jsRaw = bodies.reduce((n, b) => n + b.length, 0);
        jsGzip = bodies.reduce((n, b) => n + gzipSync(b, { level: 9 }).length, 0);
      }
      await context.close();
    }
    const verdict = (ok: boolean) => (ok ? 'within budget' : 'OVER BUDGET');
    const kb = (bytes: number) => (bytes / 1024).toFixed(1);
    console.log(`first-load JavaScript: ${kb(jsGzip)} KB gzip (${kb(jsRaw)} KB raw); budget 100 KB: ${verdict(jsGzip <= JS_GZIP_BUDGET)}`);
    const each = times.map((t) => t.toFixed(0)).join(', ');
    const usable = median(times);
    const within = verdict(usable <= USABLE_BUDGET_MS);
    console.log(`projects page usable after: median ${usable.toFixed(0)} ms of ${RUNS} cold loads (${each} ms); budget 1000 ms: ${within}`);
  } finally {
    await browser.close();
    await platform.stop();
  }
}
