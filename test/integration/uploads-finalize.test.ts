import { GetObjectCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { putMissing, sha256, site, uniqueName, uniqueSite } from '../support/uploads.ts';

let platform: TestPlatform;
let m: Awaited<ReturnType<typeof makeTeamWithRoles>>;
let s3: S3Client;

beforeAll(async () => {
  platform = await startTestPlatform();
  m = await makeTeamWithRoles();
  s3 = new S3Client({ endpoint: platform.awsEndpoint, region: 'us-east-1', forcePathStyle: true });
});
afterAll(async () => {
  s3?.destroy();
  await platform?.stop();
});

function expectError(reply: { status: number; body: any }, status: number, code: string) {
  expect({ status: reply.status, code: reply.body.code }).toEqual({ status, code });
  expect(typeof reply.body.error).toBe('string');
  expect(reply.body).toHaveProperty('details');
}

async function begin(token: string, s: { files: unknown }, name = uniqueName()) {
  const reply = await platform.api('POST', '/api/v1/uploads', { token, body: { files: s.files, project: { name } } });
  expect(reply.status).toBe(201);
  return reply.body.data;
}

const put = (token: string, uploadId: string, hash: string, body: Buffer | string) =>
  platform.api('PUT', `/api/v1/uploads/${uploadId}/files/${hash}`, { token, rawBody: body, headers: { 'content-type': 'application/octet-stream' } });

async function objectText(key: string) {
  const reply = await s3.send(new GetObjectCommand({ Bucket: platform.env.SITES_BUCKET, Key: key }));
  return { text: await reply.Body!.transformToString(), contentType: reply.ContentType };
}

describe('upload, finalize, publish', () => {
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
      files: Object.fromEntries(
        s.files.map((f) => [f.path, { hash: f.hash, size: f.size, content_type: expect.stringContaining('/') }]),
      ),
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
