import { randomBytes, randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { CreateQueueCommand, ListQueuesCommand } from '@aws-sdk/client-sqs';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '../../lib/aws/clients.ts';
import { sqs } from '../../lib/aws/sqs.ts';
import { config } from '../../lib/config.ts';
import { functionIdFor } from '../../lib/functions/records.ts';
import { closeTailChannel, openTailChannel, sweepTailQueues, TAIL_FUNCTION_TAG, TAIL_SESSION_TTL_MS } from '../../lib/functions/tail.ts';
import { deleteExpiredTailSession, getTailSession, renewTailSession } from '../../lib/functions/tail-session-records.ts';
import { setFunctionsEnrolment } from '../../lib/teams/standing.ts';
import { doorRequest, functionHostname } from '../support/door.ts';
import { expectEnvelopeError } from '../support/envelope.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { openTail } from '../support/tail.ts';
import { deploy, site } from '../support/uploads.ts';

/**
 * GET /api/v1/projects/{id}/functions/{name}/tail: a live tail of the HTTPS door's calls, on the local platform.
 * What a call prints, throws and answers reaches the watcher; nothing is kept once it leaves.
 */
let platform: TestPlatform;
let roles: Awaited<ReturnType<typeof makeTeamWithRoles>>;
let projectId: string;
let subdomain: string;
const tailPath = (name: string, id = projectId) => `/api/v1/projects/${id}/functions/${name}/tail`;

beforeAll(async () => {
  // A tail opened is seen by the door within this (3 s by default): the test's calls come right after opening.
  process.env.FUNCTIONS_TAIL_CACHE_MS = '200';
  platform = await startTestPlatform();
  roles = await makeTeamWithRoles();
  await setFunctionsEnrolment(roles.team.id, true);
  subdomain = `tail-${randomBytes(4).toString('hex')}`;
  const deployed = await deploy(
    platform,
    roles.member.token,
    site({
      'index.html': '<p>tail</p>',
      'functions/broken.js': `export default (request) => {
        console.log('handling', new URL(request.url).searchParams.get('n'));
        console.error('about to fail');
        throw new TypeError('tail-visible failure');
      };`,
      // Answers after its caller has had time to leave.
      'functions/late.js': `export default async () => {
        console.log('late call began');
        await new Promise((resolve) => setTimeout(resolve, 3000));
        return new Response('late');
      };`,
    }),
    { name: `Tail ${subdomain}`, subdomain },
  );
  projectId = deployed.begin.project_id;
}, 120_000);
afterAll(() => platform?.stop());

async function tailState() {
  const functionId = functionIdFor(projectId, 'broken');
  const sessions = await dynamo().send(
    new QueryCommand({
      TableName: config.tableName(),
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': `FNTAIL#${functionId}` },
    }),
  );
  const queues = await sqs().send(new ListQueuesCommand({ QueueNamePrefix: config.functionsTailQueuePrefix() }));
  return { sessions: sessions.Items ?? [], queues: queues.QueueUrls ?? [] };
}

describe('live tail of a function', { timeout: 90_000 }, () => {
  it("streams a call's console lines, its error and its status and duration to a member; keeps nothing after", async () => {
    const tail = await openTail(platform.baseUrl, tailPath('broken'), roles.member.token);
    expect(tail.status).toBe(200);
    expect(tail.contentType).toBe('text/event-stream; charset=utf-8');
    const opened = await tail.waitFor((m) => m.event === 'open');
    expect(opened.data).toEqual({ function: 'broken', watch_from: expect.any(String) });
    // While it is open the tail is a session and a queue of its own.
    const open = await tailState();
    expect(open.sessions).toHaveLength(1);
    expect(open.queues).toEqual([open.sessions[0]!.queue_url]);

    // The function had no call yet: the door's first look-up of its tails is fresh and finds this one.
    const reply = await doorRequest(platform.port, functionHostname(`broken-${subdomain}`, platform.port), '/?n=7');
    expect(reply.status).toBe(500);
    expect(reply.text).not.toContain('tail-visible failure');

    const call = await tail.waitFor((m) => m.event === 'call');
    expect(call.data).toEqual({
      at: expect.any(String),
      method: 'GET',
      status: 500,
      duration_ms: expect.any(Number),
      outcome: 'handler_error',
    });
    expect(call.data.duration_ms).toBeGreaterThanOrEqual(0);
    const error = await tail.waitFor((m) => m.event === 'error');
    expect(error.data).toEqual({ at: expect.any(String), message: 'tail-visible failure', stack: expect.any(String) });
    expect(error.data.stack).toMatch(/^TypeError: tail-visible failure\n\s+at /);
    const stdout = await tail.waitFor((m) => m.event === 'console' && m.data.stream === 'stdout');
    expect(stdout.data).toEqual({ at: expect.any(String), stream: 'stdout', line: 'handling 7' });
    expect(Number.isNaN(Date.parse(stdout.data.at))).toBe(false);
    const stderr = await tail.waitFor((m) => m.event === 'console' && m.data.line === 'about to fail');
    expect(stderr.data.stream).toBe('stderr');

    tail.close();
    await tail.closed;
    // The session and its queue go when the watcher leaves; calls after that leave nothing either.
    await expect.poll(async () => tailState(), { timeout: 10_000, interval: 100 }).toEqual({ sessions: [], queues: [] });
    // The door may still hold its look-up of the tail (FUNCTIONS_TAIL_CACHE_MS): what it sends finds no queue.
    expect((await doorRequest(platform.port, functionHostname(`broken-${subdomain}`, platform.port), '/?n=8')).status).toBe(500);
    expect(await tailState()).toEqual({ sessions: [], queues: [] });
  });

  it('a caller that leaves before the reply is a call with no status, outcome caller_gone, at once: the door stops waiting', async () => {
    const tail = await openTail(platform.baseUrl, tailPath('late'), roles.member.token);
    await tail.waitFor((m) => m.event === 'open');
    const caller = request({
      host: '127.0.0.1',
      port: platform.port,
      path: '/',
      headers: { host: functionHostname(`late-${subdomain}`, platform.port) },
      agent: false,
    });
    caller.on('error', () => {});
    caller.end();
    // The handler runs: the request went through the door to the instance. Then the caller goes.
    await tail.waitFor((m) => m.event === 'console' && m.data.line === 'late call began');
    caller.destroy();
    // Before the handler's reply (3 s on), which would be status 200, outcome response.
    const call = await tail.waitFor((m) => m.event === 'call', 2_500);
    expect(call.data).toEqual({
      at: expect.any(String),
      method: 'GET',
      status: null,
      duration_ms: expect.any(Number),
      outcome: 'caller_gone',
    });
    tail.close();
    await tail.closed;
  });

  it('refuses outsiders as the other function routes do (404 PROJECT_NOT_FOUND), 401 without credentials, 404 for an unknown function', async () => {
    expectEnvelopeError(await platform.api('GET', tailPath('broken'), { token: roles.outsider.token }), 404, 'PROJECT_NOT_FOUND');
    expectEnvelopeError(await platform.api('GET', tailPath('broken'), {}), 401, 'UNAUTHENTICATED');
    expectEnvelopeError(await platform.api('GET', tailPath('nosuch'), { token: roles.member.token }), 404, 'FUNCTION_NOT_FOUND');
    expectEnvelopeError(
      await platform.api('GET', tailPath('broken', 'not-a-uuid'), { token: roles.member.token }),
      404,
      'PROJECT_NOT_FOUND',
    );
    // None of them opened anything.
    expect(await tailState()).toEqual({ sessions: [], queues: [] });
  });

  it("the cloud sweep removes the queue and session of a tail whose watcher died without closing it, and keeps an open one's", async () => {
    const functionId = functionIdFor(projectId, 'broken');
    // A watcher killed mid-tail (its Lambda timed out, its process died): its session stops being renewed.
    const killed = await openTailChannel(functionId);
    const open = await openTailChannel(functionId);
    expect(await renewTailSession(killed, Date.now() - 1)).toBe(true);
    const expired = (await getTailSession(functionId, killed.session_id))!;

    const report = await sweepTailQueues();
    expect(report.removed).toEqual([killed.queue_url]);
    expect(report.kept).toBeGreaterThanOrEqual(1);
    const state = await tailState();
    expect(state.sessions.map((item) => item.session_id)).toEqual([open.session_id]);
    expect(state.queues).toEqual([open.queue_url]);
    expect(await deleteExpiredTailSession(expired)).toBe(false);
    // A watcher that renews between the sweep's read and its delete keeps its session: the delete is on the expiry read.
    const seen = (await getTailSession(functionId, open.session_id))!;
    expect(await renewTailSession(open, Date.now() + TAIL_SESSION_TTL_MS)).toBe(true);
    expect(await deleteExpiredTailSession(seen)).toBe(false);
    expect((await sweepTailQueues()).removed).toEqual([]);
    // Raced: a late renewal and the sweep of its just-expired session. One wins, and the other changes nothing:
    // either the tail goes on with its queue, or its renewal fails (the watcher then ends) and both are gone.
    expect(await renewTailSession(open, Date.now() - 1)).toBe(true);
    const [swept, renewed] = await Promise.all([sweepTailQueues(), renewTailSession(open, Date.now() + TAIL_SESSION_TTL_MS)]);
    const after = await tailState();
    if (renewed) {
      expect(swept.removed).toEqual([]);
      expect(after.queues).toEqual([open.queue_url]);
      expect(after.sessions.map((item) => item.session_id)).toEqual([open.session_id]);
      await closeTailChannel(open);
    } else {
      expect(swept.removed).toEqual([open.queue_url]);
      expect(after).toEqual({ sessions: [], queues: [] });
    }
    expect(await tailState()).toEqual({ sessions: [], queues: [] });
    // A queue whose session never came (its tail failed between the two): left while a tail may still be opening.
    const orphan = await sqs().send(
      new CreateQueueCommand({
        QueueName: `${config.functionsTailQueuePrefix()}${randomUUID()}`,
        tags: { [TAIL_FUNCTION_TAG]: functionId },
      }),
    );
    expect((await sweepTailQueues()).removed).toEqual([]);
    expect((await sweepTailQueues({ now: Date.now() + 6 * 60_000 })).removed).toEqual([orphan.QueueUrl]);
  });
});
