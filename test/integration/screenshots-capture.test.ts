import { randomBytes } from 'node:crypto';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureDriver } from '../../lib/local/capture-driver.ts';
import { CAPTURE_VIEWPORT, chromiumPath } from '../../lib/screenshots/capture.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { deploy, uniqueName, site } from '../support/uploads.ts';

/**
 * A real capture: a deployed site is opened by headless Chromium (Debian's
 * `chromium`, which .ci/run installs) through the local capture worker, and
 * the screenshot comes back through the result endpoint, as in the cloud.
 */
let platform: TestPlatform;

beforeAll(async () => {
  process.env.SCREENSHOT_CAPTURE = 'on';
  // A platform of its own: captures on (every other file runs without them) and its capture driver.
  platform = await startTestPlatform({ drivers: [() => captureDriver({ pollMs: 50 })] });
});
afterAll(async () => {
  await platform?.stop();
  delete process.env.SCREENSHOT_CAPTURE;
});

describe('screenshot capture with Chromium', () => {
  it('a publish is captured: the team reads a 1280x800 PNG of the live page, with the status it answered', {
    timeout: 60_000,
  }, async () => {
    expect(chromiumPath(), 'Chromium is needed (apt-get install chromium, or CHROMIUM_PATH)').not.toBeNull();
    const m = await makeTeamWithRoles();
    // A page whose pixels are known: a solid red body.
    const files = site({
      'index.html': `<!doctype html><html><body style="margin:0;background:#ff0000"><!-- ${randomBytes(8).toString('hex')} --></body></html>`,
    });
    const done = await deploy(platform, m.owner.token, files, { name: uniqueName(), subdomain: `cap-${randomBytes(4).toString('hex')}` });
    let screenshot: Record<string, any> | null = null;
    const deadline = Date.now() + 45_000;
    while (!screenshot && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      screenshot = (await platform.api('GET', `/api/v1/projects/${done.begin.project_id}/screenshot`, { token: m.member.token })).body.data
        .screenshot;
    }
    expect(screenshot).not.toBeNull();
    expect(screenshot).toMatchObject({ deployment_id: done.begin.deployment_id, capture_http_status: 200, ...CAPTURE_VIEWPORT });
    const image = PNG.sync.read(Buffer.from(await (await fetch(screenshot!.image_url)).arrayBuffer()));
    expect({ width: image.width, height: image.height }).toEqual(CAPTURE_VIEWPORT);
    const centre = ((image.height / 2) * image.width + image.width / 2) * 4;
    expect([...image.data.subarray(centre, centre + 4)]).toEqual([255, 0, 0, 255]);
  });
});
