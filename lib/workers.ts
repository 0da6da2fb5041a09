import type { QueueName } from './resources.ts';
import type { ResourceUse } from './http/routes.ts';
import { publishUses } from './http/routes/route-row.ts';

/**
 * The one table of background Lambdas (queue consumers and scheduled
 * targets), the counterpart of the route table: the CDK stack makes one
 * function per row and wires its trigger; the local platform plays the trigger.
 */
export type WorkerTrigger =
  /** An SQS event source mapping on the named queue. */
  | { kind: 'queue'; queue: QueueName; batchSize: number }
  /**
   * The target of EventBridge Scheduler schedules. `targetArnEnvVar` is the
   * variable through which the functions that create schedules learn this
   * worker's ARN.
   */
  | { kind: 'schedule'; targetArnEnvVar: string }
  /**
   * A recurring EventBridge Scheduler schedule (`rate(...)`) of the platform's group, invoking the worker with
   * `{}`: made by the stack, and by local provisioning for the scheduler driver to fire.
   */
  | { kind: 'rate'; every: `${number} ${'minutes' | 'hours' | 'days'}` | `1 ${'minute' | 'hour' | 'day'}` };

export interface WorkerRow {
  name: string;
  /** Lambda entry, relative to the repository root (handlers/workers/<name>.ts). */
  handler: string;
  trigger: WorkerTrigger;
  uses: readonly ResourceUse[];
  timeoutSeconds?: number;
  memoryMb?: number;
  /**
   * A Lambda container image instead of a zip bundle, for a worker whose
   * handler needs more than a bundle can carry (a browser): `directory` holds
   * the Dockerfile, which receives the handler's bundle as `index.mjs`;
   * `runtimePackages` stay out of the bundle and are installed in the image
   * from the directory's own package-lock.json; `architecture` is the one
   * those packages' binaries are built for. The shared local queue driver
   * leaves such a row to a driver of its own (lib/local/capture-driver.ts).
   */
  image?: { directory: string; runtimePackages: readonly string[]; architecture: 'x86_64' | 'arm64' };
  /** Packages imported at run time from node_modules rather than the bundle (as a route row's, lib/http/routes.ts). */
  runtimePackages?: { names: readonly string[]; architecture: 'x86_64' | 'arm64' };
}

export const workers: readonly WorkerRow[] = [
  {
    // Deletes a provisional project nothing published, about 2 h 15 min after its last begin.
    name: 'provisional-expiry',
    handler: 'handlers/workers/provisional-expiry.ts',
    trigger: { kind: 'schedule', targetArnEnvVar: 'PROVISIONAL_EXPIRY_TARGET_ARN' },
    // dns:zones: a removed project's managed-DNS zones go with it (lib/domains/removal.ts), which queues
    // the teardown of its domains' distributions and certificates (sslRetries:send).
    uses: ['table:read', 'table:write', 'sites:read', 'sites:write', 'bundles:write', 'scheduler:write', 'dns:zones', 'sslRetries:send'],
    timeoutSeconds: 300,
  },
  {
    // Queued function invocations: claims each one (a conditional write) and runs it in a fresh runner container.
    name: 'function-invocations',
    handler: 'handlers/workers/function-invocations.ts',
    trigger: { kind: 'queue', queue: 'invocations', batchSize: 1 },
    // callbacks:send: an invocation that ends with a callback URL queues its first delivery attempt. invocations:send:
    // a scheduled function's tick becomes a pending invocation and its message (lib/functions/schedules.ts).
    uses: ['table:read', 'table:write', 'bundles:read', 'bundles:write', 'callbacks:send', 'invocations:send'],
    // The Fargate task's start (bounded at 90 s, lib/functions/hosts/cloud/cloud-host.ts), the 60 s budget, the
    // result's read and the console's wait after a stop; under the queue's 240 s visibility timeout.
    timeoutSeconds: 180,
  },
  {
    // The warm pool of queued invocations in the cloud (lib/functions/hosts/cloud/warm-tasks.ts): clears the slots whose
    // blank task stopped and starts blank tasks where a slot is empty or its task's wait nears its end. The stack
    // gives it what the invocations worker has to start tasks (infra/functions-runtime.ts connectWarmPoolKeeper).
    name: 'function-warm-tasks',
    handler: 'handlers/workers/function-warm-tasks.ts',
    trigger: { kind: 'rate', every: '1 minute' },
    uses: ['table:read', 'table:write', 'bundles:read'],
    timeoutSeconds: 30,
  },
  {
    // Completion callbacks of queued invocations (lib/functions/callbacks.ts): one signed POST per message, the
    // retries queued as delayed messages. table:write records each attempt on the invocation; secrets:envEncryption
    // opens the project's callback secret (and seals it when a delivery comes before any read of it).
    name: 'function-callbacks',
    handler: 'handlers/workers/function-callbacks.ts',
    trigger: { kind: 'queue', queue: 'callbacks', batchSize: 1 },
    uses: ['table:read', 'table:write', 'bundles:read', 'callbacks:send', 'secrets:envEncryption'],
    // One attempt is at most 10 s (its timeout), plus the URL's resolution and the record; under the queue's 60 s.
    timeoutSeconds: 30,
  },
  {
    // Prepares the Lambdas of a published deployment's functions off the request path (lib/functions/prepare-lambdas.ts);
    // the stack gives it what the router has to make them (infra/functions-runtime.ts connectPrepareWorker).
    name: 'function-lambdas',
    handler: 'handlers/workers/function-lambdas.ts',
    trigger: { kind: 'queue', queue: 'functionLambdas', batchSize: 1 },
    uses: ['table:read', 'bundles:read'],
    // A new VPC Lambda's wait until Active (up to 120 s, lambda-prepare.ts); under the queue's 180 s visibility timeout.
    timeoutSeconds: 150,
  },
  {
    // Removes what a deleted project owned, then the project (lib/lifecycle/project-deletion.ts).
    name: 'deletions',
    handler: 'handlers/workers/deletions.ts',
    trigger: { kind: 'queue', queue: 'deletions', batchSize: 1 },
    uses: [
      'table:read',
      'table:write',
      'sites:read',
      'sites:write',
      'bundles:read',
      'bundles:write',
      'scheduler:write',
      'dns:zones',
      'sslRetries:send',
    ],
    timeoutSeconds: 900,
  },
  {
    // Purges a team whose deletion deadline passed, unless a legal hold blocks it (lib/lifecycle/team-deletion.ts).
    name: 'team-purge',
    handler: 'handlers/workers/team-purge.ts',
    trigger: { kind: 'schedule', targetArnEnvVar: 'TEAM_PURGE_TARGET_ARN' },
    uses: [
      'table:read',
      'table:write',
      'sites:read',
      'sites:write',
      'bundles:read',
      'bundles:write',
      'scheduler:write',
      'dns:zones',
      'sslRetries:send',
    ],
    timeoutSeconds: 900,
  },
  {
    // Keyword scan of each publish (lib/abuse/scans.ts): reads the deployment's text files within caps, records the row.
    name: 'abuse-scans',
    handler: 'handlers/workers/abuse-scans.ts',
    trigger: { kind: 'queue', queue: 'abuseScans', batchSize: 1 },
    // bundles: the results it carries from one scan of a project to the next (lib/abuse/scan-cache.ts).
    uses: ['table:read', 'table:write', 'sites:read', 'bundles:read', 'bundles:write'],
    timeoutSeconds: 120,
  },
  {
    // Applies a saved geo policy CloudFront did not take at PATCH time (lib/domains/geo.ts); a failure is retried by SQS.
    name: 'geo-filters',
    handler: 'handlers/workers/geo-filters.ts',
    trigger: { kind: 'queue', queue: 'geoFilters', batchSize: 1 },
    uses: ['table:read', 'table:write', 'cdn:distributions'],
    timeoutSeconds: 30,
  },
  {
    // TLS of verified custom domains: one attempt or validation check per message, retries queued with growing delays (lib/domains/tls.ts).
    name: 'ssl-retries',
    handler: 'handlers/workers/ssl-retries.ts',
    trigger: { kind: 'queue', queue: 'sslRetries', batchSize: 1 },
    // geoFilters:send: a geo policy CloudFront did not take onto a new distribution is retried by the geo-filters worker.
    uses: ['table:read', 'table:write', 'tls:provision', 'geoFilters:send'],
    // Under the queue's 60 s visibility timeout: a handful of ACM, CloudFront and Route 53 calls.
    timeoutSeconds: 50,
  },
  {
    // Removes cloud resources no record names any more: user-function Lambdas and custom domains' distributions
    // (lib/functions/hosts/cloud/lambda-sweep.ts, lib/domains/distribution-sweep.ts), and the queues of live tails
    // whose watcher went without closing them (lib/functions/tail.ts sweepTailQueues: their sessions, a table
    // write); the stack grants the Lambda part (infra/functions-runtime.ts connectSweepWorker).
    name: 'cloud-sweep',
    handler: 'handlers/workers/cloud-sweep.ts',
    trigger: { kind: 'rate', every: '1 hour' },
    uses: ['table:read', 'table:write', 'cdn:sweep', 'tails:sweep'],
    timeoutSeconds: 300,
  },
  {
    // Builds (lib/builds/run.ts): claims each queued build, starts it on the build host (CodeBuild in the cloud) and follows it;
    // a successful build publishes through the upload steps (finalize), so it uses what finalize uses.
    name: 'builds',
    handler: 'handlers/workers/builds.ts',
    trigger: { kind: 'queue', queue: 'builds', batchSize: 1 },
    uses: [...publishUses, 'builds:send', 'builds:run', 'secrets:envEncryption', 'secrets:forgeSigning'],
    // One follow window (BUILD_FOLLOW_WINDOW_MS) and a publish; under the queue's 360 s visibility timeout.
    timeoutSeconds: 300,
    memoryMb: 2048,
    // Publishing a production build runs the functions build, which imports esbuild at run time (as finalize does).
    runtimePackages: { names: ['esbuild', '@esbuild/linux-x64'], architecture: 'x86_64' },
  },
  {
    // Screenshot of each publish (lib/screenshots/capture.ts): headless Chromium opens the site and the
    // worker reports through the public result endpoint with the job's token, so it uses nothing else.
    name: 'screenshots-capture',
    handler: 'handlers/workers/screenshots-capture.ts',
    trigger: { kind: 'queue', queue: 'screenshots', batchSize: 1 },
    uses: [],
    // Unpacking Chromium into /tmp on a cold start, the page's 20 s load, the PNG and its upload;
    // under the queue's 120 s visibility timeout.
    timeoutSeconds: 90,
    // A browser: @sparticuz/chromium recommends 1600 MB or more; CPU grows with memory on Lambda.
    memoryMb: 2048,
    // @sparticuz/chromium's npm package carries the x86_64 build only.
    image: { directory: 'lib/screenshots/image', runtimePackages: ['playwright-core', '@sparticuz/chromium'], architecture: 'x86_64' },
  },
];

/** The EventBridge Scheduler expression of a recurring row. */
export const rateExpression = (trigger: Extract<WorkerTrigger, { kind: 'rate' }>) => `rate(${trigger.every})`;
