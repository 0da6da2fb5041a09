import { randomUUID } from 'node:crypto';
import { GetQueueAttributesCommand, GetQueueUrlCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { access } from '../../lib/access/rules.ts';
import { buildHandler } from '../../lib/http/pipeline.ts';
import { logger } from '../../lib/logger.ts';
import { sqs } from '../../lib/aws/sqs.ts';
import { recordQueuedBuild, recordSkippedBuild } from '../../lib/builds/build-records.ts';
import { config } from '../../lib/config.ts';
import { claimInvocation, putInvocation, writeInvocationEnd, type InvocationRecord } from '../../lib/functions/invocation-records.ts';
import { queueDefinitions } from '../../lib/resources.ts';
import { runCli } from '../support/cli.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';

/**
 * `slipway admin status` and `admin redrive` against the local platform, run as an operator runs them. No queue
 * consumer runs (drivers: []), so a message stays where the test puts it: it is pushed into the screenshots
 * dead-letter queue by the queue's own redrive policy (received maxReceiveCount times, never deleted).
 */
let platform: TestPlatform;
let env: Record<string, string>;
const admin = (...args: string[]) => runCli(['admin', ...args], env);

beforeAll(async () => {
  platform = await startTestPlatform({ drivers: [] });
  env = { ...platform.env, AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test', AWS_REGION: 'us-east-1' };
}, 60_000);
afterAll(async () => {
  await platform?.stop();
});

const HOUR = 3_600_000;
function invocation(createdAt: Date): InvocationRecord {
  return {
    id: randomUUID(),
    status: 'pending',
    team_id: randomUUID(),
    project_id: randomUUID(),
    function_id: randomUUID(),
    function_name: 'nightly',
    deployment_id: randomUUID(),
    created_at: createdAt.toISOString(),
    started_at: null,
    finished_at: null,
    expires_at: new Date(Date.now() + 7 * 24 * HOUR).toISOString(),
    ttl: Math.floor(Date.now() / 1000) + 7 * 24 * 3600,
  } as InvocationRecord;
}
const build = (skipReason?: string) => ({
  projectId: randomUUID(),
  teamId: randomUUID(),
  deploymentId: randomUUID(),
  trigger: 'push' as const,
  target: 'production' as const,
  branch: 'main',
  commitSha: null,
  commitMessage: null,
  label: null,
  mergeRequest: null,
  ...(skipReason ? { skipReason } : {}),
});

/** Receives the queue's message until its redrive policy moves it to the dead-letter queue (moto moves it on the receive after the last). */
async function forceIntoDeadLetters(queueUrl: string, body: string) {
  await sqs().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
  for (let i = 0; i < queueDefinitions.screenshots.maxReceiveCount; i += 1) {
    const reply = await sqs().send(new ReceiveMessageCommand({ QueueUrl: queueUrl, VisibilityTimeout: 0, WaitTimeSeconds: 1 }));
    expect(reply.Messages?.map((m) => m.Body)).toEqual([body]);
  }
  expect((await sqs().send(new ReceiveMessageCommand({ QueueUrl: queueUrl, VisibilityTimeout: 0 }))).Messages ?? []).toEqual([]);
}

async function deadLetterUrl(queueUrl: string) {
  const attributes = await sqs().send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['RedrivePolicy'] }));
  const arn = JSON.parse(attributes.Attributes!.RedrivePolicy!).deadLetterTargetArn as string;
  return (await sqs().send(new GetQueueUrlCommand({ QueueName: arn.split(':').pop()! }))).QueueUrl!;
}

describe('admin status', () => {
  it('prints every queue, nothing alarming, and the last hour of invocations and builds by status', async () => {
    const pending = invocation(new Date());
    const finished = invocation(new Date());
    await putInvocation(pending);
    await putInvocation(finished);
    await putInvocation(invocation(new Date(Date.now() - 2 * HOUR))); // older than the hour: not counted
    await claimInvocation(finished.id);
    await writeInvocationEnd(finished, 'running', { status: 'completed', finished_at: new Date().toISOString(), response_status: 200 });
    await recordQueuedBuild(build());
    await recordSkippedBuild({ ...build(), skipReason: '[skip ci] in the commit message' });

    const run = await admin('status', '--json');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const status = JSON.parse(run.stdout);
    expect(status.queues.map((q: { queue: string }) => q.queue)).toEqual(Object.keys(queueDefinitions));
    expect(status.queues.find((q: { queue: string }) => q.queue === 'invocations')).toEqual({
      queue: 'invocations',
      visible: 0,
      in_flight: 0,
      delayed: 0,
      oldest_message_age_seconds: null,
      age_alarm_seconds: 600,
      dead_letters: 0,
      oldest_dead_letter_age_seconds: null,
    });
    expect(status.invocations_last_hour).toEqual({ pending: 1, completed: 1 });
    expect(status.builds_last_hour).toEqual({ queued: 1, skipped: 1 });
    expect(status.alarming).toEqual([]);
  }, 60_000);

  it('shows a dead letter as alarming, in text and JSON, and redrive moves it back to its queue', async () => {
    const queueUrl = config.queueUrl('screenshots');
    const body = JSON.stringify({ job_id: randomUUID() });
    await forceIntoDeadLetters(queueUrl, body);

    // Both read only: the two commands' processes start together.
    const [jsonRun, text] = await Promise.all([admin('status', '--json'), admin('status')]);
    const json = JSON.parse(jsonRun.stdout);
    const screenshots = json.queues.find((q: { queue: string }) => q.queue === 'screenshots');
    expect([screenshots.dead_letters, screenshots.visible, typeof screenshots.oldest_dead_letter_age_seconds]).toEqual([1, 0, 'number']);
    expect(json.alarming).toEqual([
      {
        alarm: 'dead-letters-screenshots',
        reason: '1 message(s) in the screenshots dead-letter queue',
        runbook: 'docs/operations.md#a-dead-letter-queue-holds-messages',
      },
    ]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(
      'Alarming now:\n  dead-letters-screenshots: 1 message(s) in the screenshots dead-letter queue (docs/operations.md#a-dead-letter-queue-holds-messages)\n',
    );
    expect(text.stdout).toMatch(/^screenshots +0 +0 +0 +- +900s +1 +\d+s$/m);

    const redrive = await admin('redrive', '--queue', 'screenshots');
    expect(redrive.stderr).toBe('');
    expect(JSON.parse(redrive.stdout)).toEqual({ queue: 'screenshots', moved: 1, dead_letters_left: 0 });
    // Back in its queue, once, with its body; the dead-letter queue is empty.
    const back = await sqs().send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 30, WaitTimeSeconds: 1 }),
    );
    expect(back.Messages?.map((m) => m.Body)).toEqual([body]);
    expect(
      (await sqs().send(new ReceiveMessageCommand({ QueueUrl: await deadLetterUrl(queueUrl), VisibilityTimeout: 0 }))).Messages ?? [],
    ).toEqual([]);
    expect(JSON.parse((await admin('status', '--json')).stdout).alarming).toEqual([]);
  }, 60_000);

  it('redrives nothing from an empty dead-letter queue, and refuses a queue that does not exist', async () => {
    // An empty queue's redrive moves nothing and the two refusals touch no queue: the three processes start together.
    const [empty, wrong, missing] = await Promise.all([
      admin('redrive', '--queue', 'builds'),
      admin('redrive', '--queue', 'nope'),
      admin('redrive'),
    ]);
    expect(JSON.parse(empty.stdout)).toEqual({ queue: 'builds', moved: 0, dead_letters_left: 0 });
    expect(wrong.code).toBe(1);
    expect(wrong.stdout).toBe('');
    expect(wrong.stderr).toBe(
      'slipway: --queue nope is not a queue; one of invocations, deletions, screenshots, abuseScans, sslRetries, geoFilters, functionLambdas, callbacks, builds\n',
    );
    expect(missing.stderr).toBe(
      'slipway: --queue is required: one of invocations, deletions, screenshots, abuseScans, sslRetries, geoFilters, functionLambdas, callbacks, builds\n',
    );
  }, 60_000);

  it('reads the age of the oldest waiting message of a work queue only when asked to peek', async () => {
    const queueUrl = config.queueUrl('deletions');
    await sqs().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: '{"kind":"probe"}' }));
    const plain = JSON.parse((await admin('status', '--json')).stdout).queues.find((q: { queue: string }) => q.queue === 'deletions');
    expect([plain.visible, plain.oldest_message_age_seconds]).toEqual([1, null]);
    const peeked = JSON.parse((await admin('status', '--json', '--peek')).stdout).queues.find(
      (q: { queue: string }) => q.queue === 'deletions',
    );
    expect(peeked.visible).toBe(1);
    expect(peeked.oldest_message_age_seconds).toBeGreaterThanOrEqual(0);
    expect(peeked.oldest_message_age_seconds).toBeLessThan(60);
  }, 60_000);
});

describe('the log fields the saved queries read (docs/operations.md, Logs)', () => {
  it("gives a request's error line the team it acted for, once the team is known", async () => {
    const roles = await makeTeamWithRoles();
    const lines: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      lines.push(String(chunk));
      return true;
    });
    logger.setLogLevel('ERROR');
    try {
      const handler = buildHandler('GET /api/v1/team/boom', access.team('member'), {}, async () => {
        throw new Error('boom');
      });
      const event = {
        version: '2.0',
        routeKey: 'GET /api/v1/team/boom',
        rawPath: '/api/v1/team/boom',
        rawQueryString: '',
        headers: { authorization: `Bearer ${roles.member.token}` },
        isBase64Encoded: false,
        requestContext: {
          requestId: 'req-team-1',
          domainName: 'api.test',
          http: { method: 'GET', path: '/api/v1/team/boom', sourceIp: '127.0.0.1' },
        },
      } as unknown as APIGatewayProxyEventV2;
      const result = await handler(event, { awsRequestId: 'aws-1', getRemainingTimeInMillis: () => 1000 } as unknown as Context);
      expect(result.statusCode).toBe(500);
    } finally {
      logger.setLogLevel('CRITICAL');
      spy.mockRestore();
    }
    const logged = lines
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l))
      .find((l) => l.request_id === 'req-team-1');
    expect(logged).toMatchObject({
      level: 'ERROR',
      message: 'unexpected error',
      request_id: 'req-team-1',
      route: 'GET /api/v1/team/boom',
      team_id: roles.team.id,
    });
  });
});
