import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '../../lib/aws/clients.ts';
import { keys } from '../../lib/db/keys.ts';
import { setTeamPlan } from '../../lib/teams/standing.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { deployedObjectExists, postBatch, putMissing, sha256, site, uniqueName, uniqueSite } from '../support/uploads.ts';
import { expectEnvelopeError as expectError } from '../support/envelope.ts';

let platform: TestPlatform;
let m: Awaited<ReturnType<typeof makeTeamWithRoles>>;
let s3: S3Client;

beforeAll(async () => {
  platform = await startTestPlatform();
  m = await makeTeamWithRoles();
  await setTeamPlan(m.team.id, 'team');
  s3 = new S3Client({ endpoint: platform.awsEndpoint, region: 'us-east-1', forcePathStyle: true });
});
afterAll(async () => {
  s3?.destroy();
  await platform?.stop();
});

async function begin(token: string, s: { files: unknown }, name = uniqueName()) {
  const reply = await platform.api('POST', '/api/v1/uploads', { token, body: { files: s.files, project: { name } } });
  expect(reply.status).toBe(201);
  return reply.body.data;
}

const put = (token: string, uploadId: string, hash: string, body: Buffer | string) =>
  platform.api('PUT', `/api/v1/uploads/${uploadId}/files/${hash}`, {
    token,
    rawBody: body,
    headers: { 'content-type': 'application/octet-stream' },
  });

async function objectText(key: string) {
  const reply = await s3.send(new GetObjectCommand({ Bucket: platform.env.SITES_BUCKET, Key: key }));
  return { text: await reply.Body!.transformToString(), contentType: reply.ContentType };
}

// Each case publishes a site of its own, so they run concurrently; the large deployment shortens the finalize budget
// of the whole platform, so it runs last and alone.
describe.concurrent('upload, finalize, publish', { timeout: 120_000 }, () => {
  it('publishes every file at {team_id}/{slug}/{deployment_id}/{path} with a write-once route manifest', async () => {
    const s = uniqueSite({ 'about/index.html': '<p>about</p>', 'app.js': 'console.log(1)' });
    const session = await begin(m.member.token, s);
    expect(session.missing).toEqual([...new Set(s.files.map((f) => f.hash))].sort());
    await putMissing(platform, m.member.token, session.upload_id, session.missing, s);
    const fin = await platform.api('POST', `/api/v1/uploads/${session.upload_id}/finalize`, { token: m.member.token });
    expect(fin.status).toBe(200);
    expect(fin.body.data).toEqual({
      upload_id: session.upload_id,
      deployment_id: session.deployment_id,
      project_id: session.project_id,
      status: 'ready',
      url: `http://${session.project.subdomain}.localhost:${platform.port}`,
      file_count: 4,
      total_bytes: s.files.reduce((n, f) => n + f.size, 0),
      ready_at: expect.any(String),
    });
    const slug = session.project.slug;
    const prefix = `${m.team.id}/${slug}/${session.deployment_id}`;
    const index = await objectText(`${prefix}/index.html`);
    expect(index.text).toBe(s.bytes.get(s.files[0]!.hash)!.toString());
    expect(index.contentType).toBe('text/html; charset=utf-8');
    expect((await objectText(`${prefix}/css/site.css`)).contentType).toBe('text/css; charset=utf-8');
    expect((await objectText(`${prefix}/app.js`)).contentType).toBe('text/javascript; charset=utf-8');
    const manifest = JSON.parse((await objectText(`${prefix}.route-manifest.json`)).text);
    expect(manifest).toEqual({
      project_slug: slug,
      project_id: session.project_id,
      team_id: m.team.id,
      deployment_id: session.deployment_id,
      created_at: expect.any(String),
      files: Object.fromEntries(s.files.map((f) => [f.path, { hash: f.hash, size: f.size, content_type: expect.stringContaining('/') }])),
    });

    const project = await platform.api('GET', `/api/v1/projects/${session.project_id}`, { token: m.member.token });
    if (project.status === 200) {
      expect(project.body.data.live_deployment_id).toBe(session.deployment_id);
      expect(project.body.data.provisional_until).toBeNull();
    }
    // A repeated finalize answers with the same deployment.
    const again = await platform.api('POST', `/api/v1/uploads/${session.upload_id}/finalize`, { token: m.member.token });
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual(fin.body.data);
  });
});

/** Whether the session's deployment folder stores the content (at the first manifest path carrying it). */
const stored = (session: { deployment_id: string; project: { slug: string } }, files: { path: string; hash: string }[], hash: string) =>
  deployedObjectExists(m.team.id, session, files.find((f) => f.hash === hash)!.path);

describe.concurrent('PUT /api/v1/uploads/{upload_id}/files/{hash}', { timeout: 120_000 }, () => {
  it('refuses bytes that do not match the hash, and stores nothing', async () => {
    const s = uniqueSite();
    const session = await begin(m.member.token, s);
    const hash = session.missing[0];
    const reply = await put(m.member.token, session.upload_id, hash, 'not the file');
    expectError(reply, 422, 'UPLOAD_CONTENT_MISMATCH');
    expect(reply.body.details).toMatchObject({ expected_hash: hash, actual_hash: sha256('not the file') });
    expect(await stored(session, s.files, hash)).toBe(false);
    const fin = await platform.api('POST', `/api/v1/uploads/${session.upload_id}/finalize`, { token: m.member.token });
    expectError(fin, 409, 'UPLOAD_INCOMPLETE');
    expect(fin.body.details.missing).toEqual(session.missing);
  });

  it('refuses bytes whose size differs from the manifest', async () => {
    const bytes = Buffer.from(`<p>${uniqueName()}</p>`);
    const files = [{ path: 'index.html', hash: sha256(bytes), size: bytes.length + 1 }];
    const session = await begin(m.member.token, { files });
    const reply = await put(m.member.token, session.upload_id, sha256(bytes), bytes);
    expectError(reply, 422, 'UPLOAD_CONTENT_MISMATCH');
    expect(reply.body.details).toMatchObject({ expected_size: bytes.length + 1, actual_size: bytes.length });
    expect(await stored(session, files, sha256(bytes))).toBe(false);
  });

  it('refuses a hash that is not in the manifest', async () => {
    const session = await begin(m.member.token, uniqueSite());
    const stray = Buffer.from('stray');
    expectError(await put(m.member.token, session.upload_id, sha256(stray), stray), 400, 'UPLOAD_HASH_NOT_IN_MANIFEST');
    expectError(await put(m.member.token, session.upload_id, 'not-a-hash', stray), 400, 'UPLOAD_HASH_NOT_IN_MANIFEST');
  });

  it('is idempotent, and accepts a manifest hash the team already held', async () => {
    const s = uniqueSite();
    const session = await begin(m.member.token, s);
    const hash = session.missing[0];
    for (let i = 0; i < 2; i++) {
      const reply = await put(m.member.token, session.upload_id, hash, s.bytes.get(hash)!);
      expect(reply.status).toBe(200);
      expect(reply.body.data).toEqual({ upload_id: session.upload_id, hash, size: s.bytes.get(hash)!.length, received: true });
    }
    const second = await begin(m.member.token, s);
    expect(second.missing).not.toContain(hash);
    expect((await put(m.member.token, second.upload_id, hash, s.bytes.get(hash)!)).status).toBe(200);
  });

  it('refuses a finalized session and an expired one', async () => {
    const s = uniqueSite();
    const session = await begin(m.member.token, s);
    await putMissing(platform, m.member.token, session.upload_id, session.missing, s);
    expect((await platform.api('POST', `/api/v1/uploads/${session.upload_id}/finalize`, { token: m.member.token })).status).toBe(200);
    const hash = session.missing[0];
    expectError(await put(m.member.token, session.upload_id, hash, s.bytes.get(hash)!), 409, 'UPLOAD_SESSION_FINALIZED');

    const s2 = uniqueSite();
    const expired = await begin(m.member.token, s2);
    // Move the clock: the session's expiry is in the past.
    await dynamo().send(
      new UpdateCommand({
        TableName: platform.env.TABLE_NAME,
        Key: keys.uploadSession(expired.upload_id),
        UpdateExpression: 'SET expires_at = :past',
        ExpressionAttributeValues: { ':past': new Date(Date.now() - 1000).toISOString() },
      }),
    );
    const h2 = expired.missing[0];
    expectError(await put(m.member.token, expired.upload_id, h2, s2.bytes.get(h2)!), 409, 'UPLOAD_SESSION_EXPIRED');
    expectError(
      await platform.api('POST', `/api/v1/uploads/${expired.upload_id}/finalize`, { token: m.member.token }),
      409,
      'UPLOAD_SESSION_EXPIRED',
    );
  });

  it('authorization: 401 without a token; 404 for another team, a platform admin, or an unknown session', async () => {
    const s = uniqueSite();
    const session = await begin(m.member.token, s);
    const hash = session.missing[0];
    const bytes = s.bytes.get(hash)!;
    expectError(
      await platform.api('PUT', `/api/v1/uploads/${session.upload_id}/files/${hash}`, { rawBody: bytes }),
      401,
      'UNAUTHENTICATED',
    );
    expectError(await put(m.outsider.token, session.upload_id, hash, bytes), 404, 'UPLOAD_NOT_FOUND');
    expectError(await put(m.platformAdmin.token, session.upload_id, hash, bytes), 404, 'UPLOAD_NOT_FOUND');
    expectError(await put(m.member.token, '00000000-0000-4000-8000-000000000000', hash, bytes), 404, 'UPLOAD_NOT_FOUND');
    expect(await stored(session, s.files, hash)).toBe(false);
    for (const who of ['owner', 'admin', 'apiKey'] as const)
      expect((await put(m[who].token, session.upload_id, hash, bytes)).status).toBe(200);
  });
});

describe.concurrent('POST /api/v1/uploads/{upload_id}/finalize', { timeout: 120_000 }, () => {
  it('refuses while files are missing, listing them', async () => {
    const s = uniqueSite();
    const session = await begin(m.member.token, s);
    const [first, ...rest] = session.missing;
    await putMissing(platform, m.member.token, session.upload_id, [first], s);
    const reply = await platform.api('POST', `/api/v1/uploads/${session.upload_id}/finalize`, { token: m.member.token });
    expectError(reply, 409, 'UPLOAD_INCOMPLETE');
    expect(reply.body.details).toEqual({ missing: rest, missing_count: rest.length });
  });

  it('concurrent finalizes publish once and all answer with the same deployment', async () => {
    const s = uniqueSite();
    const session = await begin(m.member.token, s);
    await putMissing(platform, m.member.token, session.upload_id, session.missing, s);
    const replies = await Promise.all(
      Array.from({ length: 4 }, () => platform.api('POST', `/api/v1/uploads/${session.upload_id}/finalize`, { token: m.member.token })),
    );
    for (const r of replies) {
      expect(r.status).toBe(200);
      expect(r.body.data).toEqual(replies[0]!.body.data);
    }
  });

  it('authorization: 401 without a token, 404 for another team and a platform admin; every role and an API key may finalize', async () => {
    const s = uniqueSite();
    const session = await begin(m.member.token, s);
    await putMissing(platform, m.member.token, session.upload_id, session.missing, s);
    const path = `/api/v1/uploads/${session.upload_id}/finalize`;
    expectError(await platform.api('POST', path), 401, 'UNAUTHENTICATED');
    expectError(await platform.api('POST', path, { token: m.outsider.token }), 404, 'UPLOAD_NOT_FOUND');
    expectError(await platform.api('POST', path, { token: m.platformAdmin.token }), 404, 'UPLOAD_NOT_FOUND');
    expect((await platform.api('POST', path, { token: m.apiKey.token })).status).toBe(200);
    for (const who of ['owner', 'admin'] as const) {
      const other = uniqueSite();
      const own = await begin(m[who].token, other);
      await putMissing(platform, m[who].token, own.upload_id, own.missing, other);
      expect((await platform.api('POST', `/api/v1/uploads/${own.upload_id}/finalize`, { token: m[who].token })).status).toBe(200);
    }
  });
});

describe.concurrent('POST /api/v1/projects/{id}/uploads', { timeout: 120_000 }, () => {
  it('opens a new session for an existing project; finalizing it moves production', async () => {
    const s = uniqueSite();
    const first = await begin(m.member.token, s);
    await putMissing(platform, m.member.token, first.upload_id, first.missing, s);
    await platform.api('POST', `/api/v1/uploads/${first.upload_id}/finalize`, { token: m.member.token });

    const next = uniqueSite();
    const reply = await platform.api('POST', `/api/v1/projects/${first.project_id}/uploads`, {
      token: m.member.token,
      body: { files: next.files, label: 'v2' },
    });
    expect(reply.status).toBe(201);
    expect(Object.keys(reply.body.data).sort()).toEqual(
      ['upload_id', 'deployment_id', 'project_id', 'expires_at', 'known_count', 'missing', 'total_bytes_to_send'].sort(),
    );
    expect(reply.body.data.project_id).toBe(first.project_id);
    await putMissing(platform, m.member.token, reply.body.data.upload_id, reply.body.data.missing, next);
    const fin = await platform.api('POST', `/api/v1/uploads/${reply.body.data.upload_id}/finalize`, { token: m.member.token });
    expect(fin.status).toBe(200);
    const project = await platform.api('GET', `/api/v1/projects/${first.project_id}`, { token: m.member.token });
    expect(project.body.data.live_deployment_id).toBe(reply.body.data.deployment_id);
  });

  it("checks the manifest the same way, and hides other teams' projects", async () => {
    const first = await begin(m.member.token, uniqueSite());
    const path = `/api/v1/projects/${first.project_id}/uploads`;
    expectError(await platform.api('POST', path, { token: m.member.token, body: { files: [] } }), 400, 'INVALID_MANIFEST');
    expectError(
      await platform.api('POST', path, { token: m.member.token, body: { files: site({ 'dist/index.html': 'x' }).files } }),
      422,
      'UPLOAD_SITE_IN_SUBFOLDER',
    );
    expectError(await platform.api('POST', path, { body: { files: uniqueSite().files } }), 401, 'UNAUTHENTICATED');
    expectError(
      await platform.api('POST', path, { token: m.outsider.token, body: { files: uniqueSite().files } }),
      404,
      'PROJECT_NOT_FOUND',
    );
    expectError(
      await platform.api('POST', path, { token: m.platformAdmin.token, body: { files: uniqueSite().files } }),
      404,
      'PROJECT_NOT_FOUND',
    );
    for (const who of ['owner', 'admin', 'apiKey'] as const) {
      expect((await platform.api('POST', path, { token: m[who].token, body: { files: uniqueSite().files } })).status).toBe(201);
    }
  });
});

describe('finalize of a large deployment', { timeout: 120_000 }, () => {
  it('answers 503 PUBLISH_IN_PROGRESS with Retry-After past its time budget, and the next call carries on where it stopped', async () => {
    // Another project of the team published these 1,001 files: the second project's finalize copies them in.
    const contents = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`p/${i}.html`, `<p>${i} ${uniqueName()}</p>`]));
    const s = site({ 'index.html': `<h1>${uniqueName()}</h1>`, ...contents });
    const first = await begin(m.member.token, s);
    for (let i = 0; i < first.missing.length; i += 100) {
      const batch = first.missing.slice(i, i + 100).map((hash: string) => ({ name: hash, bytes: s.bytes.get(hash)! }));
      expect((await postBatch(platform, m.member.token, first.upload_id, batch)).status).toBe(200);
    }
    expect((await platform.api('POST', `/api/v1/uploads/${first.upload_id}/finalize`, { token: m.member.token })).status).toBe(200);

    const session = await begin(m.member.token, s);
    expect(session.missing).toEqual([]);
    expect(session.known_count).toBe(1001);
    process.env.FINALIZE_BUDGET_MS = '1';
    // 250 copies a call rather than 500: each call stays well inside the route's Lambda timeout on a busy machine.
    process.env.FINALIZE_COPY_CHUNK = '250';
    try {
      const path = `/api/v1/uploads/${session.upload_id}/finalize`;
      const one = await platform.api('POST', path, { token: m.member.token });
      expectError(one, 503, 'PUBLISH_IN_PROGRESS');
      expect(one.headers.get('retry-after')).toBe('1');
      expect(one.body.details).toEqual({ published_count: 250, file_count: 1001 });
      for (const published of [500, 750, 1000]) {
        const next = await platform.api('POST', path, { token: m.member.token });
        expectError(next, 503, 'PUBLISH_IN_PROGRESS');
        expect(next.body.details).toEqual({ published_count: published, file_count: 1001 });
      }
      const done = await platform.api('POST', path, { token: m.member.token });
      expect(done.status).toBe(200);
      expect(done.body.data.file_count).toBe(1001);
    } finally {
      delete process.env.FINALIZE_BUDGET_MS;
      delete process.env.FINALIZE_COPY_CHUNK;
    }
    const last = await objectText(`${m.team.id}/${session.project.slug}/${session.deployment_id}/p/999.html`);
    expect(last.text).toBe(contents['p/999.html']);
    expect(last.contentType).toBe('text/html; charset=utf-8');
  });
});
