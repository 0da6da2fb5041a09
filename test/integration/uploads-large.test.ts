import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTeamPlan } from '../../lib/teams/standing.ts';
import { freshConfigHome, runCli } from '../support/cli.ts';
import { expectEnvelopeError as expectError } from '../support/envelope.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { siteRequest } from '../support/sites.ts';
import { deployedObjectExists, sha256, site, uniqueName, type SiteFiles } from '../support/uploads.ts';

/**
 * Files over 4 MiB cannot pass through API Gateway to Lambda, so they go
 * straight to storage with a presigned URL and the server checks them on
 * complete (POST .../files/{hash}/upload-url, then .../complete).
 */
let platform: TestPlatform;
let m: Awaited<ReturnType<typeof makeTeamWithRoles>>;

beforeAll(async () => {
  platform = await startTestPlatform();
  m = await makeTeamWithRoles();
  await setTeamPlan(m.team.id, 'team');
});
afterAll(() => platform?.stop());

const FIVE_MIB = 5 * 1024 * 1024;

function largeSite(): { s: SiteFiles; hash: string; bytes: Buffer } {
  const bytes = randomBytes(FIVE_MIB);
  const s = site({ 'index.html': `<h1>${uniqueName()}</h1>`, 'media/video.mp4': bytes });
  return { s, hash: sha256(bytes), bytes };
}

async function begin(s: SiteFiles) {
  const reply = await platform.api('POST', '/api/v1/uploads', {
    token: m.member.token,
    body: { files: s.files, project: { name: uniqueName() } },
  });
  expect(reply.status).toBe(201);
  return reply.body.data;
}

const uploadUrl = (uploadId: string, hash: string, token = m.member.token) =>
  platform.api('POST', `/api/v1/uploads/${uploadId}/files/${hash}/upload-url`, { token });
const complete = (uploadId: string, hash: string, token = m.member.token) =>
  platform.api('POST', `/api/v1/uploads/${uploadId}/files/${hash}/complete`, { token });

describe('a file over 4 MiB', { timeout: 120_000 }, () => {
  it('is refused by PUT with 413, and goes by upload URL and complete instead', async () => {
    const { s, hash, bytes } = largeSite();
    const session = await begin(s);
    const put = await platform.api('PUT', `/api/v1/uploads/${session.upload_id}/files/${hash}`, {
      token: m.member.token,
      rawBody: bytes,
      headers: { 'content-type': 'application/octet-stream' },
    });
    expectError(put, 413, 'PAYLOAD_TOO_LARGE');
    expect(put.body.details).toEqual({ max_bytes: 4 * 1024 * 1024 });

    const target = await uploadUrl(session.upload_id, hash);
    expect(target.status).toBe(200);
    expect(target.body.data).toEqual({
      upload_id: session.upload_id,
      hash,
      size: FIVE_MIB,
      method: 'PUT',
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\//),
      headers: { 'content-length': String(FIVE_MIB), 'x-amz-checksum-sha256': Buffer.from(hash, 'hex').toString('base64') },
      expires_at: expect.any(String),
    });
    expect(Date.parse(target.body.data.expires_at)).toBeLessThanOrEqual(Date.parse(session.expires_at));
    const sent = await fetch(target.body.data.url, { method: 'PUT', headers: target.body.data.headers, body: bytes });
    expect(sent.status).toBe(200);

    const done = await complete(session.upload_id, hash);
    expect(done.status).toBe(200);
    expect(done.body.data).toEqual({ upload_id: session.upload_id, hash, size: FIVE_MIB, received: true });
    // Repeating it is harmless.
    expect((await complete(session.upload_id, hash)).body.data).toEqual(done.body.data);

    const [small] = session.missing.filter((h: string) => h !== hash);
    await platform.api('PUT', `/api/v1/uploads/${session.upload_id}/files/${small}`, {
      token: m.member.token,
      rawBody: s.bytes.get(small)!,
    });
    expect((await platform.api('POST', `/api/v1/uploads/${session.upload_id}/finalize`, { token: m.member.token })).status).toBe(200);
    const served = await siteRequest(platform.port, `${session.project.subdomain}.localhost:${platform.port}`, '/media/video.mp4');
    expect(served.status).toBe(200);
    expect(served.headers['content-type']).toBe('video/mp4');
    expect(served.body.equals(bytes)).toBe(true);
  });

  it('sent with other bytes is refused on complete and discarded; nothing joins the deployment', async () => {
    const { s, hash } = largeSite();
    const session = await begin(s);
    const target = (await uploadUrl(session.upload_id, hash)).body.data;
    // The local endpoint does not check the signed checksum; the server's own check is what refuses.
    const other = randomBytes(FIVE_MIB);
    expect((await fetch(target.url, { method: 'PUT', headers: target.headers, body: other })).status).toBe(200);
    const refused = await complete(session.upload_id, hash);
    expectError(refused, 422, 'UPLOAD_CONTENT_MISMATCH');
    expect(refused.body.details).toEqual({
      expected_hash: hash,
      actual_hash: sha256(other),
      expected_size: FIVE_MIB,
      actual_size: FIVE_MIB,
    });
    expect(await deployedObjectExists(m.team.id, session, 'media/video.mp4')).toBe(false);
    expectError(await complete(session.upload_id, hash), 409, 'UPLOAD_FILE_NOT_SENT');
    const fin = await platform.api('POST', `/api/v1/uploads/${session.upload_id}/finalize`, { token: m.member.token });
    expectError(fin, 409, 'UPLOAD_INCOMPLETE');
    expect(fin.body.details.missing).toContain(hash);
  });

  it('complete before anything was sent is 409; a hash outside the manifest is 400; another team gets 404; a finalized session 409', async () => {
    const { s, hash } = largeSite();
    const session = await begin(s);
    expectError(await complete(session.upload_id, hash), 409, 'UPLOAD_FILE_NOT_SENT');
    const stray = sha256(`stray ${uniqueName()}`);
    expectError(await uploadUrl(session.upload_id, stray), 400, 'UPLOAD_HASH_NOT_IN_MANIFEST');
    expectError(await complete(session.upload_id, stray), 400, 'UPLOAD_HASH_NOT_IN_MANIFEST');
    expectError(await uploadUrl(session.upload_id, 'not-a-hash'), 400, 'UPLOAD_HASH_NOT_IN_MANIFEST');
    expectError(await platform.api('POST', `/api/v1/uploads/${session.upload_id}/files/${hash}/upload-url`), 401, 'UNAUTHENTICATED');
    expectError(await uploadUrl(session.upload_id, hash, m.outsider.token), 404, 'UPLOAD_NOT_FOUND');
    expectError(await complete(session.upload_id, hash, m.outsider.token), 404, 'UPLOAD_NOT_FOUND');
    expectError(await uploadUrl(session.upload_id, hash, m.platformAdmin.token), 404, 'UPLOAD_NOT_FOUND');

    const small = site({ 'index.html': `<p>${uniqueName()}</p>` });
    const closed = await begin(small);
    for (const h of closed.missing) {
      await platform.api('PUT', `/api/v1/uploads/${closed.upload_id}/files/${h}`, { token: m.member.token, rawBody: small.bytes.get(h)! });
    }
    expect((await platform.api('POST', `/api/v1/uploads/${closed.upload_id}/finalize`, { token: m.member.token })).status).toBe(200);
    expectError(await uploadUrl(closed.upload_id, closed.missing[0]), 409, 'UPLOAD_SESSION_FINALIZED');
    expectError(await complete(closed.upload_id, closed.missing[0]), 409, 'UPLOAD_SESSION_FINALIZED');
  });

  it('slipway deploy sends it by upload URL and the site serves it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'slipway-large-'));
    const video = randomBytes(FIVE_MIB);
    mkdirSync(join(dir, 'media'));
    const page = `<h1>${uniqueName()}</h1>`;
    writeFileSync(join(dir, 'index.html'), page);
    writeFileSync(join(dir, 'media', 'video.mp4'), video);
    const subdomain = `large-${randomBytes(4).toString('hex')}`;
    const run = await runCli(['deploy', dir, '--subdomain', subdomain, '--json'], {
      SLIPWAY_API_URL: platform.baseUrl,
      SLIPWAY_TOKEN: m.apiKey.token,
      XDG_CONFIG_HOME: freshConfigHome(),
    });
    expect(run.stderr).not.toContain('Error');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ files_sent: 2, bytes_sent: FIVE_MIB + Buffer.byteLength(page) });
    const served = await siteRequest(platform.port, `${subdomain}.localhost:${platform.port}`, '/media/video.mp4');
    expect(served.status).toBe(200);
    expect(served.body.equals(video)).toBe(true);
  });
});
