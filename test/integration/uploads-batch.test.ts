import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTeamPlan } from '../../lib/teams/standing.ts';
import { expectEnvelopeError as expectError } from '../support/envelope.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { siteRequest } from '../support/sites.ts';
import {
  deployedObjectExists,
  multipartBody,
  postBatch,
  sha256,
  site,
  uniqueName,
  uniqueSite,
  type SiteFiles,
} from '../support/uploads.ts';

/** POST /api/v1/uploads/{upload_id}/files: many files in one multipart request, checked like the PUT. */
let platform: TestPlatform;
let m: Awaited<ReturnType<typeof makeTeamWithRoles>>;

beforeAll(async () => {
  platform = await startTestPlatform();
  m = await makeTeamWithRoles();
  await setTeamPlan(m.team.id, 'team');
});
afterAll(() => platform?.stop());

async function begin(token: string, s: SiteFiles) {
  const reply = await platform.api('POST', '/api/v1/uploads', { token, body: { files: s.files, project: { name: uniqueName() } } });
  expect(reply.status).toBe(201);
  return reply.body.data;
}

const parts = (s: SiteFiles, hashes: string[]) => hashes.map((hash) => ({ name: hash, bytes: s.bytes.get(hash)! }));

/** Whether the deployment folder stores a content, at the first manifest path carrying it. */
const stored = (session: { deployment_id: string; project: { slug: string } }, s: SiteFiles, hash: string) =>
  deployedObjectExists(m.team.id, session, s.files.find((f) => f.hash === hash)!.path);

describe('POST /api/v1/uploads/{upload_id}/files', { timeout: 120_000 }, () => {
  it('stores every file of the batch; finalize publishes them', async () => {
    const s = uniqueSite({ 'app.js': `console.log(${Date.now()})`, 'img/logo.svg': `<svg>${uniqueName()}</svg>` });
    const session = await begin(m.member.token, s);
    const reply = await postBatch(platform, m.member.token, session.upload_id, parts(s, session.missing));
    expect(reply.status).toBe(200);
    expect(reply.body.data).toEqual({
      upload_id: session.upload_id,
      received: session.missing.map((hash: string) => ({ hash, size: s.bytes.get(hash)!.length })),
      received_count: session.missing.length,
    });
    const fin = await platform.api('POST', `/api/v1/uploads/${session.upload_id}/finalize`, { token: m.member.token });
    expect(fin.status).toBe(200);
    const host = `${session.project.subdomain}.localhost:${platform.port}`;
    for (const file of s.files) {
      const served = await siteRequest(platform.port, host, `/${file.path}`);
      expect(served.status).toBe(200);
      expect(served.body.equals(s.bytes.get(file.hash)!)).toBe(true);
    }
  });

  it('is idempotent: the same batch twice, or two at once, store the same files', async () => {
    const s = uniqueSite();
    const session = await begin(m.member.token, s);
    const batch = parts(s, session.missing);
    const replies = await Promise.all([1, 2, 3].map(() => postBatch(platform, m.member.token, session.upload_id, batch)));
    for (const reply of replies) expect(reply.status).toBe(200);
    expect((await postBatch(platform, m.member.token, session.upload_id, batch)).status).toBe(200);
    expect((await platform.api('POST', `/api/v1/uploads/${session.upload_id}/finalize`, { token: m.member.token })).status).toBe(200);
  });

  it('refuses the whole batch when one file does not match its hash or size, and stores none of it', async () => {
    const s = uniqueSite();
    const session = await begin(m.member.token, s);
    const [good, bad] = session.missing as string[];
    const reply = await postBatch(platform, m.member.token, session.upload_id, [
      { name: good!, bytes: s.bytes.get(good!)! },
      { name: bad!, bytes: 'not the file' },
    ]);
    expectError(reply, 422, 'UPLOAD_CONTENT_MISMATCH');
    expect(reply.body.details).toMatchObject({ expected_hash: bad, actual_hash: sha256('not the file') });
    expect(await stored(session, s, good!)).toBe(false);

    const padded = Buffer.concat([s.bytes.get(bad!)!, Buffer.from(' ')]);
    const sizeReply = await postBatch(platform, m.member.token, session.upload_id, [{ name: bad!, bytes: padded }]);
    expectError(sizeReply, 422, 'UPLOAD_CONTENT_MISMATCH');
  });

  it('refuses a hash that is not in the manifest, storing nothing', async () => {
    const s = uniqueSite();
    const session = await begin(m.member.token, s);
    const [good] = session.missing as string[];
    const stray = Buffer.from(`stray ${uniqueName()}`);
    const reply = await postBatch(platform, m.member.token, session.upload_id, [
      { name: good!, bytes: s.bytes.get(good!)! },
      { name: sha256(stray), bytes: stray },
    ]);
    expectError(reply, 400, 'UPLOAD_HASH_NOT_IN_MANIFEST');
    expect(reply.body.details).toEqual({ hash: sha256(stray) });
    expect(await stored(session, s, good!)).toBe(false);
  });

  it('refuses a body that is not a batch of files, with a stable code and what is wrong', async () => {
    const s = uniqueSite();
    const session = await begin(m.member.token, s);
    const path = `/api/v1/uploads/${session.upload_id}/files`;
    const [hash] = session.missing as string[];

    const json = await platform.api('POST', path, { token: m.member.token, body: { files: [] } });
    expectError(json, 415, 'UNSUPPORTED_MEDIA_TYPE');
    expect(json.body.error).toBe('The request body must be multipart/form-data, one file part per file, named by its hash.');

    const noBoundary = await platform.api('POST', path, {
      token: m.member.token,
      rawBody: 'x',
      headers: { 'content-type': 'multipart/form-data; charset=utf-8' },
    });
    expectError(noBoundary, 400, 'UPLOAD_BATCH_INVALID');

    const field = await postBatch(platform, m.member.token, session.upload_id, [{ name: hash!, bytes: 'text', field: true }]);
    expectError(field, 400, 'UPLOAD_BATCH_INVALID');
    expect(field.body.details.problem).toContain('form field');

    const empty = await multipartBody([]);
    expectError(
      await platform.api('POST', path, {
        token: m.member.token,
        rawBody: empty.body,
        headers: { 'content-type': 'multipart/form-data; boundary=nothing-here' },
      }),
      400,
      'UPLOAD_BATCH_INVALID',
    );

    const many = site(
      Object.fromEntries(Array.from({ length: 101 }, (_, i) => [i === 0 ? 'index.html' : `f/${i}.txt`, `${i} ${uniqueName()}`])),
    );
    const big = await begin(m.member.token, many);
    const tooMany = await postBatch(platform, m.member.token, big.upload_id, parts(many, big.missing));
    expectError(tooMany, 400, 'UPLOAD_BATCH_INVALID');
    expect(tooMany.body.details).toMatchObject({ max_files: 100 });
    // Exactly the limit is fine.
    expect((await postBatch(platform, m.member.token, big.upload_id, parts(many, big.missing.slice(0, 100)))).status).toBe(200);

    const huge = await postBatch(platform, m.member.token, session.upload_id, [
      { name: hash!, bytes: Buffer.alloc(4 * 1024 * 1024 + 64 * 1024 + 1) },
    ]);
    expectError(huge, 413, 'PAYLOAD_TOO_LARGE');
    expect(await stored(session, s, hash!)).toBe(false);
  });

  it('authorization: 401 without a token; 404 for another team, a platform admin, or an unknown session; 409 once finalized', async () => {
    const s = uniqueSite();
    const session = await begin(m.member.token, s);
    const batch = parts(s, session.missing);
    expectError(await postBatch(platform, undefined, session.upload_id, batch), 401, 'UNAUTHENTICATED');
    expectError(await postBatch(platform, m.outsider.token, session.upload_id, batch), 404, 'UPLOAD_NOT_FOUND');
    expectError(await postBatch(platform, m.platformAdmin.token, session.upload_id, batch), 404, 'UPLOAD_NOT_FOUND');
    expectError(await postBatch(platform, m.member.token, '00000000-0000-4000-8000-000000000000', batch), 404, 'UPLOAD_NOT_FOUND');
    expectError(await postBatch(platform, m.member.token, 'not-a-uuid', batch), 404, 'UPLOAD_NOT_FOUND');
    expect(await stored(session, s, session.missing[0])).toBe(false);
    for (const who of ['owner', 'admin', 'apiKey'] as const) {
      expect((await postBatch(platform, m[who].token, session.upload_id, batch)).status).toBe(200);
    }
    expect((await platform.api('POST', `/api/v1/uploads/${session.upload_id}/finalize`, { token: m.member.token })).status).toBe(200);
    expectError(await postBatch(platform, m.member.token, session.upload_id, batch), 409, 'UPLOAD_SESSION_FINALIZED');
  });
});
