import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { systemChromiumLaunchOptions } from '../../lib/screenshots/capture.ts';
import { repoRoot } from '../../lib/local/api-server.ts';

/** Debian's Chromium, launched the way the platform's capture driver launches it. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ ...systemChromiumLaunchOptions(), headless: true });
}

/** Where the browser tests leave their screenshots (ignored by git). */
export const SHOTS_DIR = join(repoRoot, 'test', '.out', 'dashboard');

export async function saveScreenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SHOTS_DIR, { recursive: true });
  const file = join(SHOTS_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

const axeSource: string = (createRequire(import.meta.url)('axe-core') as { source: string }).source;

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** axe-core's WCAG checks on the page as it is: no serious or critical finding. */
export async function expectAccessible(page: Page, where: string): Promise<void> {
  // Evaluated over DevTools, not added as an inline <script>: the console's Content-Security-Policy refuses those.
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(axeSource);
  // A string, evaluated in the page: this file is type-checked without the DOM's types.
  const violations = (await page.evaluate(`(async () => {
    const result = await window.axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) }));
  })()`)) as AxeViolation[];
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(serious.map((v) => `${where}: ${v.id} (${v.impact}) ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual(
    [],
  );
}

/**
 * Drops a folder of this machine on an element the way a person's drag from
 * the file manager arrives: through Chromium's own drag machinery (DevTools
 * Input.dispatchDragEvent with the folder's path), so the page walks real
 * directory entries.
 */
export async function dropFolder(page: Page, selector: string, folder: string): Promise<void> {
  const box = (await page.locator(selector).boundingBox())!;
  const x = box.x + box.width / 2;
  const y = box.y + box.height / 2;
  const cdp = await page.context().newCDPSession(page);
  const data = { items: [], files: [folder], dragOperationsMask: 1 };
  for (const type of ['dragEnter', 'dragOver', 'drop'] as const) await cdp.send('Input.dispatchDragEvent', { type, x, y, data });
  await cdp.detach();
}
