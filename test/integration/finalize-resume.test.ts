import { CopyObjectCommand, DeleteObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3 } from '../../lib/aws/s3.ts';
import { config } from '../../lib/config.ts';
import { contentTypeFor } from '../../lib/deployments/content-type.ts';
import { setTeamPlan } from '../../lib/teams/standing.ts';
import { expectEnvelopeError } from '../support/envelope.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { siteRequest } from '../support/sites.ts';
import { putMissing, sha256, site, uniqueName, uniqueSite, type SiteFiles } from '../support/uploads.ts';
import { forgetHeldBlobs, heldBlobs, recordHeldBlobs } from '../../lib/publishing/blob-records.ts';

/**
 * Uploads store each content once, in the deployment folder at its first
 * path; finalize references or copies what the team already held. These
 * tests cover the ways a deployment's files come together other than the
 * plain upload: a cut-short finalize, shared contents, earlier sessions of the
 * same project, and bytes the team no longer holds.
 */
let platform: TestPlatform;
let m: Awaited<ReturnType<typeof makeTeamWithRoles>>;

beforeAll(async () => {
  platform = await startTestPlatform();
  m = await makeTeamWithRoles();
  await setTeamPlan(m.team.id, 'team');
});
afterAll(() => platform?.stop());

async function begin(s: SiteFiles, project?: string) {
  const reply = project
    ? await platform.api('POST', `/api/v1/projects/${project}/uploads`, { token: m.owner.token, body: { files: s.files } })
    : await platform.api('POST', '/api/v1/uploads', { token: m.owner.token, body: { files: s.files, project: { name: uniqueName() } } });
  expect(reply.status).toBe(201);
  return reply.body.data;
}

const finalize = (uploadId: string) => platform.api('POST', `/api/v1/uploads/${uploadId}/finalize`, { token: m.owner.token });

async function expectServed(subdomain: string, s: SiteFiles) {
  const host = `${subdomain}.localhost:${platform.port}`;
  for (const file of s.files) {
    const reply = await siteRequest(platform.port, host, `/${file.path}`);
    expect(reply.status, file.path).toBe(200);
    expect(reply.body.equals(s.bytes.get(file.hash)!), file.path).toBe(true);
    expect(reply.headers['content-type'], file.path).toBe(contentTypeFor(file.path));
  }
}

describe('finalize after a cut-short finalize', () => {
  it('publishes every file, with its content type, when part of the copies were already made', async () => {
    const s = uniqueSite({ 'about.html': '<h1>about</h1>', 'app.js': 'console.log(1)', 'data.json': '{"a":1}' });
    const first = await begin(s);
    await putMissing(platform, m.owner.token, first.upload_id, first.missing, s);
    expect((await finalize(first.upload_id)).status).toBe(200);

    // A second project with the same files copies them from the first one's folder.
    const second = await begin(s);
    expect(second.missing).toEqual([]);
    // What an attempt stopped by its timeout leaves behind: some of the copies, no manifest, nothing live.
    const from = `${m.team.id}/${first.project.slug}/${first.deployment_id}/`;
    const to = `${m.team.id}/${second.project.slug}/${second.deployment_id}/`;
    for (const path of ['index.html', 'app.js']) {
      await s3().send(
        new CopyObjectCommand({
          Bucket: config.bucket('sites'),
          Key: `${to}${path}`,
          CopySource: `${config.bucket('sites')}/${from}${path}`,
          ContentType: contentTypeFor(path),
          MetadataDirective: 'REPLACE',
        }),
      );
    }

    const fin = await finalize(second.upload_id);
    expect(fin.status).toBe(200);
    expect(fin.body.data).toMatchObject({ deployment_id: second.deployment_id, status: 'ready', file_count: 5 });
    await expectServed(second.project.subdomain, s);
  });
});

describe('contents shared by several paths', () => {
  it("are uploaded once and served at every path with that path's content type", async () => {
    const same = `shared ${uniqueName()}`;
    const s = site({ 'index.html': `<h1>${uniqueName()}</h1>`, 'a.html': same, 'b.txt': same, 'c/d.css': same });
    const session = await begin(s);
    expect(session.missing).toHaveLength(2);
    await putMissing(platform, m.owner.token, session.upload_id, session.missing, s);
    expect((await finalize(session.upload_id)).status).toBe(200);
    await expectServed(session.project.subdomain, s);
  });
});

describe('a content two open sessions of the team both received', () => {
  it('publishes both, the one whose record the later upload repointed included', async () => {
    const s = uniqueSite({ 'shared.css': `body{color:red} /* ${uniqueName()} */` });
    // Both sessions begin before either uploads: each is asked for every file.
    const a = await begin(s);
    const b = await begin(s);
    expect(b.missing).toEqual(a.missing);
    await putMissing(platform, m.owner.token, a.upload_id, a.missing, s);
    await putMissing(platform, m.owner.token, b.upload_id, b.missing, s);
    // The team's records now name b's folder; a's files are in a's folder all the same.
    const records = await heldBlobs(m.team.id, a.missing);
    for (const hash of a.missing) expect(records.get(hash)?.object_key).toMatch(new RegExp(`/${b.deployment_id}/`));
    for (const session of [a, b]) {
      const fin = await finalize(session.upload_id);
      expect(fin.status).toBe(200);
      expect(fin.body.data).toMatchObject({ deployment_id: session.deployment_id, status: 'ready' });
      await expectServed(session.project.subdomain, s);
    }
  });

  it('names what a session did not receive, though the team holds it through the other', async () => {
    const s = uniqueSite({ 'extra.txt': `extra ${uniqueName()}` });
    const a = await begin(s);
    const b = await begin(s);
    const [unsent, ...sent] = a.missing as string[];
    await putMissing(platform, m.owner.token, a.upload_id, sent, s);
    await putMissing(platform, m.owner.token, b.upload_id, b.missing, s);
    const fin = await finalize(a.upload_id);
    expectEnvelopeError(fin, 409, 'UPLOAD_INCOMPLETE');
    expect(fin.body.error).toBe('Some files of the manifest have not been uploaded yet.');
    expect(fin.body.details).toEqual({ missing: [unsent], missing_count: 1 });
  });
});

describe('the retry path', () => {
  it('a new session of the project is not asked again for what an earlier unfinished session received', async () => {
    const s = uniqueSite({ 'more.html': `<p>${uniqueName()}</p>` });
    const first = await begin(s);
    const [sent, ...unsent] = first.missing as string[];
    await putMissing(platform, m.owner.token, first.upload_id, [sent!], s);
    // The client gave up on the first session (a failed finalize, say) and retries on the project.
    const retry = await begin(s, first.project_id);
    expect(retry.missing).toEqual(unsent);
    expect(retry.known_count).toBe(1);
    await putMissing(platform, m.owner.token, retry.upload_id, retry.missing, s);
    expect((await finalize(retry.upload_id)).status).toBe(200);
    await expectServed(first.project.subdomain, s);
  });
});

describe('bytes the team held at begin but lost before finalize', () => {
  it('are named by UPLOAD_INCOMPLETE, then accepted and published once sent', async () => {
    const s = uniqueSite();
    const first = await begin(s);
    await putMissing(platform, m.owner.token, first.upload_id, first.missing, s);
    expect((await finalize(first.upload_id)).status).toBe(200);

    const second = await begin(s);
    expect(second.missing).toEqual([]);
    // The first project's objects disappear (as when it is deleted) before the second finalizes.
    const lost = s.files[0]!;
    await s3().send(
      new DeleteObjectCommand({
        Bucket: config.bucket('sites'),
        Key: `${m.team.id}/${first.project.slug}/${first.deployment_id}/${lost.path}`,
      }),
    );
    const refused = await finalize(second.upload_id);
    expectEnvelopeError(refused, 409, 'UPLOAD_INCOMPLETE');
    expect(refused.body.details).toEqual({ missing: [lost.hash], missing_count: 1 });

    // The team no longer counts those bytes as held: the next session asks for them.
    const third = await begin(s);
    expect(third.missing).toEqual([lost.hash]);

    await putMissing(platform, m.owner.token, second.upload_id, [lost.hash], s);
    expect((await finalize(second.upload_id)).status).toBe(200);
    await expectServed(second.project.subdomain, s);
  });
});

describe('forgetting a stale record', () => {
  it('never removes a record that a newer upload pointed somewhere else meanwhile', async () => {
    const hash = sha256(`race ${uniqueName()}`);
    const fresh = { hash, size: 1, object_key: `${m.team.id}/fresh/d/new.txt`, project_id: 'p-new' };
    const stale = { hash, size: 1, object_key: `${m.team.id}/old/d/gone.txt`, project_id: 'p-old' };
    // A finalize read the old record; before it forgets it, another upload records a fresh location.
    await recordHeldBlobs(m.team.id, [fresh]);
    await forgetHeldBlobs(m.team.id, [stale]);
    expect((await heldBlobs(m.team.id, [hash])).get(hash)).toEqual({ hash, object_key: fresh.object_key, project_id: 'p-new' });
    // Forgetting one location while another is recorded, at once: in either order the new record survives.
    await Promise.all([forgetHeldBlobs(m.team.id, [fresh]), recordHeldBlobs(m.team.id, [stale])]);
    expect((await heldBlobs(m.team.id, [hash])).get(hash)?.object_key).toBe(stale.object_key);
    await forgetHeldBlobs(m.team.id, [stale]);
    expect((await heldBlobs(m.team.id, [hash])).has(hash)).toBe(false);
  });
});
