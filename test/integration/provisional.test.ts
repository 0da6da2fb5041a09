import { HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { GetScheduleCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '../../lib/aws/clients.ts';
import { keys } from '../../lib/db/keys.ts';
import { expireProvisionalProject } from '../../lib/lifecycle/project-expiry.ts';
import { setTeamPlan } from '../../lib/teams/standing.ts';
import { handler as expiryWorker } from '../../handlers/workers/provisional-expiry.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { putMissing, uniqueName, uniqueSite } from '../support/uploads.ts';

let platform: TestPlatform;
let m: Awaited<ReturnType<typeof makeTeamWithRoles>>;
let scheduler: SchedulerClient;
let s3: S3Client;

beforeAll(async () => {
  process.env.LOCAL_SCHEDULER_POLL_MS = '200';
  platform = await startTestPlatform();
  m = await makeTeamWithRoles();
  await setTeamPlan(m.team.id, 'team');
  scheduler = new SchedulerClient({ endpoint: platform.awsEndpoint, region: 'us-east-1' });
  s3 = new S3Client({ endpoint: platform.awsEndpoint, region: 'us-east-1', forcePathStyle: true });
});
afterAll(async () => {
  scheduler?.destroy();
  s3?.destroy();
  await platform?.stop();
});

/** Begin-upload with the provisional lifetime set to `seconds` (PROVISIONAL_EXPIRY_SECONDS, read per request). */
async function beginWithExpiry(seconds: number, s = uniqueSite(), project: { name: string; subdomain?: string } = { name: uniqueName() }) {
  process.env.PROVISIONAL_EXPIRY_SECONDS = String(seconds);
  try {
    const reply = await platform.api('POST', '/api/v1/uploads', { token: m.member.token, body: { files: s.files, project } });
    expect(reply.status).toBe(201);
    return reply.body.data;
  } finally {
    delete process.env.PROVISIONAL_EXPIRY_SECONDS;
  }
}

async function schedule(projectId: string) {
  try {
    return await scheduler.send(new GetScheduleCommand({ Name: `provisional-${projectId}`, GroupName: platform.env.SCHEDULE_GROUP }));
  } catch (error) {
    if ((error as Error).name === 'ResourceNotFoundException') return null;
    throw error;
  }
}

const getProject = (id: string) => platform.api('GET', `/api/v1/projects/${id}`, { token: m.member.token });

/** Moves the clock for one project: its provisional time is up. */
async function expireNow(projectId: string) {
  await dynamo().send(
    new UpdateCommand({
      TableName: platform.env.TABLE_NAME,
      Key: keys.project(projectId),
      UpdateExpression: 'SET provisional_until = :past',
      ExpressionAttributeValues: { ':past': new Date(Date.now() - 1000).toISOString() },
    }),
  );
}

async function until<T>(probe: () => Promise<T | null>, what: string): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const value = await probe();
    if (value !== null) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`gave up waiting for ${what}`);
}

describe('provisional lifecycle', { timeout: 120_000 }, () => {
  it('begin sets a one-time at() schedule for provisional_until, targeting the expiry worker', async () => {
    const session = await beginWithExpiry(8100);
    const s = await schedule(session.project_id);
    expect(s).not.toBeNull();
    const until = new Date(Math.ceil(Date.parse(session.project.provisional_until) / 1000) * 1000);
    expect(s!.ScheduleExpression).toBe(`at(${until.toISOString().slice(0, 19)})`);
    expect(s!.ScheduleExpressionTimezone).toBe('UTC');
    expect(s!.Target!.Arn).toBe(platform.env.PROVISIONAL_EXPIRY_TARGET_ARN);
    expect(JSON.parse(s!.Target!.Input!)).toEqual({ project_id: session.project_id });
  });

  it('an abandoned upload leaves no project: the local scheduler fires the worker, which deletes it and its holds', async () => {
    const subdomain = `gone-${Date.now()}`;
    const name = uniqueName('Abandoned');
    const s = uniqueSite();
    const session = await beginWithExpiry(1, s, { name, subdomain });
    await until(async () => ((await getProject(session.project_id)).status === 404 ? true : null), 'the expiry');
    // The schedule goes after its target's invocation has completed (ActionAfterCompletion DELETE), a moment after
    // the worker deleted the project within it.
    await until(async () => ((await schedule(session.project_id)) === null ? true : null), 'the schedule deleted after completion');
    const put = await platform.api('PUT', `/api/v1/uploads/${session.upload_id}/files/${session.missing[1]}`, {
      token: m.member.token,
      rawBody: s.bytes.get(session.missing[1])!,
    });
    expect(put.status).toBe(404);
    const manifest = await s3
      .send(new HeadObjectCommand({ Bucket: platform.env.BUNDLES_BUCKET, Key: `uploads/${session.upload_id}/manifest.json` }))
      .then(
        () => true,
        () => false,
      );
    expect(manifest).toBe(false);
    const list = await platform.api('GET', '/api/v1/projects?limit=100', { token: m.member.token });
    expect(list.body.data.projects.map((p: any) => p.id)).not.toContain(session.project_id);
    // The subdomain and the name are free again.
    const again = await platform.api('POST', '/api/v1/uploads', {
      token: m.member.token,
      body: { files: uniqueSite().files, project: { name, subdomain } },
    });
    expect(again.status).toBe(201);
  });

  it('the files an expired project had received are no longer counted as held by the team', async () => {
    const s = uniqueSite();
    const session = await beginWithExpiry(1, s);
    await putMissing(platform, m.member.token, session.upload_id, session.missing, s);
    // Received: a second begin right now is not asked for them.
    const meanwhile = await platform.api('POST', '/api/v1/uploads', {
      token: m.member.token,
      body: { files: s.files, project: { name: uniqueName() } },
    });
    expect(meanwhile.body.data.missing).toEqual([]);
    await until(async () => ((await getProject(session.project_id)).status === 404 ? true : null), 'the expiry');
    // Their objects went with the project: the next upload of the same files is asked for every one.
    const after = await platform.api('POST', '/api/v1/uploads', {
      token: m.member.token,
      body: { files: s.files, project: { name: uniqueName() } },
    });
    expect(after.status).toBe(201);
    expect(after.body.data.missing).toEqual(session.missing);
    expect(after.body.data.known_count).toBe(0);
  });

  it('publishing clears provisional_until and deletes the schedule; a late firing deletes nothing', async () => {
    const s = uniqueSite();
    const session = await beginWithExpiry(3600, s);
    await putMissing(platform, m.member.token, session.upload_id, session.missing, s);
    expect((await platform.api('POST', `/api/v1/uploads/${session.upload_id}/finalize`, { token: m.member.token })).status).toBe(200);
    expect(await schedule(session.project_id)).toBeNull();
    const project = await getProject(session.project_id);
    expect(project.body.data.provisional_until).toBeNull();
    expect(await expiryWorker({ project_id: session.project_id })).toEqual({ project_id: session.project_id, outcome: 'kept' });
    expect((await getProject(session.project_id)).status).toBe(200);
  });

  it('each begin on a provisional project moves the expiry to 2 h 15 min after it', async () => {
    const first = await beginWithExpiry(8100);
    await new Promise((r) => setTimeout(r, 1100));
    process.env.PROVISIONAL_EXPIRY_SECONDS = '8100';
    const second = await platform.api('POST', `/api/v1/projects/${first.project_id}/uploads`, {
      token: m.member.token,
      body: { files: uniqueSite().files },
    });
    delete process.env.PROVISIONAL_EXPIRY_SECONDS;
    expect(second.status).toBe(201);
    const project = (await getProject(first.project_id)).body.data;
    expect(Date.parse(project.provisional_until)).toBeGreaterThan(Date.parse(first.project.provisional_until));
    const s = await schedule(first.project_id);
    const until = new Date(Math.ceil(Date.parse(project.provisional_until) / 1000) * 1000);
    expect(s!.ScheduleExpression).toBe(`at(${until.toISOString().slice(0, 19)})`);
    // A firing at the first time finds the project still within its time: kept.
    expect(await expireProvisionalProject(first.project_id, new Date(Date.parse(first.project.provisional_until) + 500))).toBe('kept');
    expect((await getProject(first.project_id)).status).toBe(200);
  });

  it('a publish racing the expiry: either it publishes and the project lives, or it finds the project expired; never both', async () => {
    const cases = await Promise.all(
      Array.from({ length: 6 }, async () => {
        const s = uniqueSite();
        const session = await beginWithExpiry(3600, s);
        await putMissing(platform, m.member.token, session.upload_id, session.missing, s);
        await expireNow(session.project_id);
        return session;
      }),
    );
    const outcomes = await Promise.all(
      cases.map(async (session) => {
        const [fin, expiry] = await Promise.all([
          platform.api('POST', `/api/v1/uploads/${session.upload_id}/finalize`, { token: m.member.token }),
          expireProvisionalProject(session.project_id),
        ]);
        const project = await getProject(session.project_id);
        return { fin, expiry, project };
      }),
    );
    for (const { fin, expiry, project } of outcomes) {
      if (fin.status === 200) {
        expect(expiry).toBe('kept');
        expect(project.status).toBe(200);
        expect(project.body.data.live_deployment_id).toBe(fin.body.data.deployment_id);
        expect(project.body.data.provisional_until).toBeNull();
      } else {
        // The expiry won: mid-finalize the publish finds the project expired (409); before
        // finalize began, the session was deleted with the project (404).
        expect([
          { status: 409, code: 'PROJECT_EXPIRED' },
          { status: 404, code: 'UPLOAD_NOT_FOUND' },
        ]).toContainEqual({ status: fin.status, code: fin.body.code });
        expect(expiry).toBe('deleted');
        expect(project.status).toBe(404);
      }
    }
  });
});
