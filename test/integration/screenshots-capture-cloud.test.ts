import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { DeleteMessageCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler } from '../../handlers/workers/screenshots-capture.ts';
import { repoRoot } from '../../infra/bundling.ts';
import { stageImageContext } from '../../infra/functions.ts';
import { sqs } from '../../lib/aws/sqs.ts';
import { config } from '../../lib/config.ts';
import { CAPTURE_VIEWPORT, chromiumPath } from '../../lib/screenshots/capture.ts';
import type { CaptureMessage } from '../../lib/screenshots/jobs.ts';
import { workers } from '../../lib/workers.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { deploy, site, uniqueName } from '../support/uploads.ts';
import { until } from '../support/wait.ts';

/**
 * The cloud capture worker without its image (no Docker engine here): its
 * build context as the stack stages it (the handler bundled with the stack's
 * esbuild settings), run by Node 22 in a fresh process with the variables its
 * Dockerfile sets, so the bundle launches @sparticuz/chromium's build, the one
 * the image installs, unpacked as on Lambda (its Amazon Linux libraries too).
 * The capture comes back through the local platform's result endpoint. And the
 * handler's batch answer: which messages SQS gets back.
 */
const row = workers.find((w) => w.name === 'screenshots-capture')!;
let platform: TestPlatform;
let m: Awaited<ReturnType<typeof makeTeamWithRoles>>;
let siteUrl: string;
let projectId: string;
let deploymentId: string;
const scratch: string[] = [];

beforeAll(async () => {
  // No drivers: the queue's messages wait for this test to take them.
  platform = await startTestPlatform({ drivers: [] });
  m = await makeTeamWithRoles();
  const files = site({
    'index.html': `<!doctype html><html><body style="margin:0;background:#0000ff"><!-- ${randomBytes(8).toString('hex')} --></body></html>`,
  });
  const subdomain = `cloudcap-${randomBytes(4).toString('hex')}`;
  const done = await deploy(platform, m.owner.token, files, { name: uniqueName(), subdomain });
  projectId = done.begin.project_id;
  deploymentId = done.begin.deployment_id;
  siteUrl = `http://${subdomain}.localhost:${platform.port}`;
});
afterAll(async () => {
  await platform?.stop();
  for (const dir of scratch) fs.rmSync(dir, { recursive: true, force: true });
});

/** The publish's capture message, taken off the screenshots queue as the event source mapping would. */
async function publishMessage(): Promise<{ messageId: string; body: string }> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const out = await sqs().send(
      new ReceiveMessageCommand({ QueueUrl: config.queueUrl('screenshots'), MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
    );
    for (const message of out.Messages ?? []) {
      await sqs().send(new DeleteMessageCommand({ QueueUrl: config.queueUrl('screenshots'), ReceiptHandle: message.ReceiptHandle! }));
      if ((JSON.parse(message.Body!) as CaptureMessage).url === siteUrl) return { messageId: message.MessageId!, body: message.Body! };
    }
  }
  throw new Error('no capture message for the publish');
}

const sqsEvent = (records: { messageId: string; body: string }[]): SQSEvent => ({
  Records: records.map(({ messageId, body }) => ({
    messageId,
    receiptHandle: `handle-${messageId}`,
    body,
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: String(Date.now()),
      SenderId: 'test',
      ApproximateFirstReceiveTimestamp: String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:screenshots',
    awsRegion: 'us-east-1',
  })),
});

/** The `ENV` the image's Dockerfile sets, as name/value pairs. */
function dockerfileEnvironment(): Record<string, string> {
  const text = fs.readFileSync(path.join(repoRoot, row.image!.directory, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  const env: Record<string, string> = {};
  for (const line of text.split('\n').filter((l) => l.startsWith('ENV '))) {
    for (const [, name, value] of line.slice(4).matchAll(/([A-Z_][A-Z0-9_]*)=(\S+)/g)) env[name!] = value!;
  }
  return env;
}

/** Runs the staged bundle's handler in a fresh Node process, as the image's runtime would call it. */
function runBundle(context: string, event: SQSEvent, env: Record<string, string>): Promise<{ result: SQSBatchResponse; stderr: string }> {
  const resultFile = path.join(context, 'result.json');
  const script =
    "const { handler } = await import('./index.mjs'); const event = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));" +
    "require('node:fs').writeFileSync(process.argv[1], JSON.stringify(await handler(event)));";
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { createRequire } from 'node:module'; const require = createRequire(import.meta.url); ${script}`,
        resultFile,
      ],
      {
        cwd: context,
        env,
        stdio: ['pipe', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`the bundle's process exited ${code}: ${stderr}`));
      resolve({ result: JSON.parse(fs.readFileSync(resultFile, 'utf8')) as SQSBatchResponse, stderr });
    });
    child.stdin.end(JSON.stringify(event));
  });
}

describe('the cloud capture worker', () => {
  it('its staged bundle captures the publish with @sparticuz/chromium and reports a 1280x800 PNG through the result endpoint', {
    timeout: 120_000,
  }, async () => {
    const context = stageImageContext(row.handler, row.image!);
    scratch.push(context);
    expect(fs.readdirSync(context).sort()).toEqual(['Dockerfile', 'index.mjs', 'index.mjs.map', 'package-lock.json', 'package.json']);
    // /var/task/node_modules in the image: here the repository's copies of the same versions (test/infra checks the lockfile).
    fs.symlinkSync(path.join(repoRoot, 'node_modules'), path.join(context, 'node_modules'));
    const lambdaTmp = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-capture-tmp-'));
    scratch.push(lambdaTmp);
    const imageEnv = dockerfileEnvironment();
    expect(imageEnv).toEqual({ SCREENSHOT_CHROMIUM: 'serverless', AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x' });

    const message = await publishMessage();
    const { result, stderr } = await runBundle(context, sqsEvent([message]), {
      PATH: process.env.PATH!,
      // Lambda's only writable place; @sparticuz/chromium unpacks Chromium and its libraries there.
      TMPDIR: lambdaTmp,
      API_BASE_URL: platform.baseUrl,
      LOG_LEVEL: 'WARN',
      NODE_OPTIONS: '--enable-source-maps',
      ...imageEnv,
    });
    expect(result, stderr).toEqual({ batchItemFailures: [] });
    // The browser was the serverless build, unpacked with the Amazon Linux libraries it brings.
    expect(fs.existsSync(path.join(lambdaTmp, 'chromium'))).toBe(true);
    expect(fs.existsSync(path.join(lambdaTmp, 'al2023', 'lib', 'libnss3.so'))).toBe(true);

    const screenshot = (await platform.api('GET', `/api/v1/projects/${projectId}/screenshot`, { token: m.member.token })).body.data
      .screenshot;
    expect(screenshot).toMatchObject({
      job_id: (JSON.parse(message.body) as CaptureMessage).job_id,
      deployment_id: deploymentId,
      capture_http_status: 200,
      ...CAPTURE_VIEWPORT,
    });
    const image = PNG.sync.read(Buffer.from(await (await fetch(screenshot.image_url)).arrayBuffer()));
    expect({ width: image.width, height: image.height }).toEqual(CAPTURE_VIEWPORT);
    const centre = ((image.height / 2) * image.width + image.width / 2) * 4;
    expect([...image.data.subarray(centre, centre + 4)]).toEqual([0, 0, 255, 255]);
  });

  it('answers SQS with the messages to retry: a report the endpoint refused with 5xx or 429; not a final 401/409, nor a malformed message', {
    timeout: 90_000,
  }, async () => {
    expect(chromiumPath(), 'Chromium is needed (apt-get install chromium, or CHROMIUM_PATH)').not.toBeNull();
    // A result endpoint that answers each job with the status its id names.
    const seen: string[] = [];
    const endpoint: Server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
      req.resume();
      req.on('end', () => res.writeHead(Number(req.url!.split('/').pop())).end());
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    const previous = platform.env.API_BASE_URL!;
    platform.env.API_BASE_URL = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}`;
    try {
      const job = (id: string): string =>
        JSON.stringify({ job_id: id, token: 't', url: siteUrl, upload_path: `/jobs/${id}` } satisfies CaptureMessage);
      const result = await handler(
        sqsEvent([
          { messageId: 'm-503', body: job('503') },
          { messageId: 'm-409', body: job('409') },
          { messageId: 'm-401', body: job('401') },
          { messageId: 'm-429', body: job('429') },
          { messageId: 'm-not-json', body: 'not json' },
          { messageId: 'm-no-token', body: JSON.stringify({ job_id: 'x', url: siteUrl, upload_path: '/jobs/200' }) },
        ]),
      );
      expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'm-503' }, { itemIdentifier: 'm-429' }] });
      // Four captures reported, each a PNG; the two malformed messages reached nothing.
      expect(seen).toEqual(['PUT /jobs/503 image/png', 'PUT /jobs/409 image/png', 'PUT /jobs/401 image/png', 'PUT /jobs/429 image/png']);
    } finally {
      platform.env.API_BASE_URL = previous;
      await new Promise((resolve) => endpoint.close(resolve));
    }
  });

  it('keeps the page away from the Lambda runtime API: no request, image or WebSocket of the page reaches its port', {
    timeout: 90_000,
  }, async () => {
    // A stand-in for the runtime API on loopback, recording what reaches it.
    const reached: string[] = [];
    const runtimeApi: Server = createServer((req, res) => {
      reached.push(`${req.method} ${req.url}`);
      res.writeHead(200, { 'content-type': 'text/plain', 'access-control-allow-origin': '*' }).end('event');
    });
    runtimeApi.on('upgrade', (req, socket) => {
      reached.push(`UPGRADE ${req.url}`);
      socket.destroy();
    });
    await new Promise<void>((resolve) => runtimeApi.listen(0, '127.0.0.1', resolve));
    const port = (runtimeApi.address() as AddressInfo).port;
    // The result endpoint; also holds the page's `load` (an image) until the WebSocket attempt reached the
    // stand-in, or for 1.5 s, so the capture does not close the browser before the attempt is made.
    const reportedTo = createServer(async (req, res) => {
      if (req.url === '/hold.png') {
        for (let waited = 0; waited < 1500 && !reached.some((r) => r.startsWith('UPGRADE')); waited += 50)
          await new Promise((r) => setTimeout(r, 50));
      }
      req.resume().on('end', () => res.writeHead(200).end());
    });
    await new Promise<void>((resolve) => reportedTo.listen(0, '127.0.0.1', resolve));
    const reportPort = (reportedTo.address() as AddressInfo).port;
    const subdomain = `probe-${randomBytes(4).toString('hex')}`;
    // The page tries the runtime API by three names for loopback and three kinds of request.
    const page =
      `<!doctype html><html><body style="margin:0;background:#00ff00">` +
      `<img src="http://127.0.0.1:${port}/img"><img src="http://127.1:${port}/img-short">` +
      `<script>fetch('http://localhost:${port}/2018-06-01/runtime/invocation/next').catch(() => {});` +
      `try { new WebSocket('ws://127.0.0.1:${port}/ws'); } catch {}</script>` +
      `<img src="http://127.0.0.1:${reportPort}/hold.png"></body></html>`;
    await deploy(platform, m.owner.token, site({ 'index.html': page }), { name: uniqueName(), subdomain });
    const url = `http://${subdomain}.localhost:${platform.port}`;
    const previous = { api: platform.env.API_BASE_URL!, runtime: process.env.AWS_LAMBDA_RUNTIME_API };
    platform.env.API_BASE_URL = `http://127.0.0.1:${reportPort}`;
    const capture = (id: string) =>
      handler(sqsEvent([{ messageId: id, body: JSON.stringify({ job_id: id, token: 't', url, upload_path: '/jobs/x' }) }]));
    try {
      // Control: outside Lambda the same page does reach that port.
      delete process.env.AWS_LAMBDA_RUNTIME_API;
      expect(await capture('control')).toEqual({ batchItemFailures: [] });
      // Each of the four attempts reaches the stand-in: waited for, not given a fixed 300 ms on a busy machine.
      await until(async () => reached.length >= 4, 'the four attempts of the page outside Lambda');
      expect([...reached].sort()).toEqual(['GET /2018-06-01/runtime/invocation/next', 'GET /img', 'GET /img-short', 'UPGRADE /ws']);
      reached.length = 0;

      process.env.AWS_LAMBDA_RUNTIME_API = `127.0.0.1:${port}`;
      expect(await capture('guarded')).toEqual({ batchItemFailures: [] });
      await new Promise((r) => setTimeout(r, 300));
      expect(reached).toEqual([]);
    } finally {
      platform.env.API_BASE_URL = previous.api;
      if (previous.runtime === undefined) delete process.env.AWS_LAMBDA_RUNTIME_API;
      else process.env.AWS_LAMBDA_RUNTIME_API = previous.runtime;
      await new Promise((resolve) => runtimeApi.close(resolve));
      await new Promise((resolve) => reportedTo.close(resolve));
    }
  });
});
