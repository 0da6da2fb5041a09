import { CopyObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3 } from '../../lib/aws/s3.ts';
import { config } from '../../lib/config.ts';
import { contentTypeFor } from '../../lib/deployments/content-type.ts';
import { blobKey } from '../../lib/uploads/blobs.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { siteRequest } from '../support/sites.ts';
import { putMissing, uniqueName, uniqueSite } from '../support/uploads.ts';

/**
 * A finalize of thousands of files can outlive its Lambda timeout on a slow
 * endpoint; the CLI then retries it. The retry must publish the deployment
 * whole, whatever the cut-short attempt had already copied.
 */
let platform: TestPlatform;
let m: Awaited<ReturnType<typeof makeTeamWithRoles>>;

beforeAll(async () => {
  platform = await startTestPlatform();
  m = await makeTeamWithRoles();
});
afterAll(() => platform?.stop());

describe('finalize after a cut-short finalize', () => {
  it('publishes every file, with its content type, when part of the deployment folder was already copied', async () => {
    const s = uniqueSite({ 'about.html': '<h1>about</h1>', 'app.js': 'console.log(1)', 'data.json': '{"a":1}' });
    const begin = await platform.api('POST', '/api/v1/uploads', { token: m.owner.token, body: { files: s.files, project: { name: uniqueName() } } });
    expect(begin.status).toBe(201);
    const session = begin.body.data;
    await putMissing(platform, m.owner.token, session.upload_id, session.missing, s);

    // What an attempt stopped by its timeout leaves behind: some of the copies, no manifest, nothing live.
    const prefix = `${m.team.id}/${session.project.slug}/${session.deployment_id}/`;
    for (const file of s.files.filter((f) => f.path === 'index.html' || f.path === 'app.js')) {
      await s3().send(
        new CopyObjectCommand({
          Bucket: config.bucket('sites'),
          Key: `${prefix}${file.path}`,
          CopySource: `${config.bucket('bundles')}/${blobKey(m.team.id, file.hash)}`,
          ContentType: contentTypeFor(file.path),
          MetadataDirective: 'REPLACE',
        }),
      );
    }

    const fin = await platform.api('POST', `/api/v1/uploads/${session.upload_id}/finalize`, { token: m.owner.token });
    expect(fin.status).toBe(200);
    expect(fin.body.data).toMatchObject({ deployment_id: session.deployment_id, status: 'ready', file_count: 5 });

    const host = `${session.project.subdomain}.localhost:${platform.port}`;
    for (const file of s.files) {
      const reply = await siteRequest(platform.port, host, `/${file.path}`);
      expect(reply.status).toBe(200);
      expect(reply.body.equals(s.bytes.get(file.hash)!)).toBe(true);
      expect(reply.headers['content-type']).toBe(contentTypeFor(file.path));
    }
  });
});
