/**
 * The one definition of every stateful resource. The CDK stack creates these
 * and the local platform provisions the same set from this file, so the two
 * cannot drift. Each resource names the environment variable through which
 * handlers learn its physical name.
 */
export const tableDefinition = {
  envVar: 'TABLE_NAME',
  partitionKey: 'pk',
  sortKey: 'sk',
  /** Items carrying this attribute (epoch seconds) are deleted by DynamoDB TTL. */
  ttlAttribute: 'ttl',
  globalSecondaryIndexes: [
    // Reverse lookups: "the teams of a user", "the projects of a team" ...
    { indexName: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
    { indexName: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk' },
  ],
} as const;

/**
 * Where the functions door stages a request body too large for a user-function Lambda's invocation payload, in the
 * bundles bucket (lib/functions/hosts/cloud/body-staging.ts): the Lambda reads it through a presigned URL, the door
 * deletes it after the reply, and the bucket's rule removes what a frozen or failed router left after a day.
 */
export const stagedBodyPrefix = 'door-bodies/';

export const bucketDefinitions = {
  /** Deployed site objects at {team_id}/{slug}/{deployment_id}/{path}. */
  sites: { id: 'SitesBucket', envVar: 'SITES_BUCKET', expire: [] },
  /**
   * Upload manifests and large files awaiting complete (`uploads/`), function
   * bundles, and queued invocations' request, result and console output
   * (`invocations/`). What is under `uploads/` is of no use once its session is
   * gone: 2 h open plus 7 days kept for late callers, so it expires after 9
   * days. Queued invocations are kept 7 days (spec Limits, Data handling).
   */
  bundles: {
    id: 'BundlesBucket',
    envVar: 'BUNDLES_BUCKET',
    expire: [
      { prefix: 'uploads/', days: 9 },
      // The bucket is versioned: the replaced version goes a day later, so nothing outlives 7 days by the general 30-day rule.
      { prefix: 'invocations/', days: 7, noncurrentDays: 1 },
      // A build's job, log and output archive (lib/builds/cloud-host.ts): of no use once the build is recorded.
      { prefix: 'builds/', days: 7, noncurrentDays: 1 },
      { prefix: stagedBodyPrefix, days: 1, noncurrentDays: 1 },
      // Package-manager stores of builds, per project and lockfile hash: a lockfile unchanged for a month builds cold once.
      { prefix: 'build-cache/', days: 30, noncurrentDays: 1 },
    ],
  },
} as const;

export const queueDefinitions = {
  invocations: {
    id: 'InvocationsQueue',
    envVar: 'INVOCATIONS_QUEUE_URL',
    // Longer than the worker's 180 s timeout (task start, the 60 s budget, the
    // result), so a running invocation is never handed to a second consumer.
    visibilityTimeoutSeconds: 240,
    maxReceiveCount: 3,
  },
  deletions: {
    id: 'DeletionsQueue',
    envVar: 'DELETIONS_QUEUE_URL',
    // Longer than the deletions worker's 900 s timeout: a removal in progress is never handed to a second consumer.
    visibilityTimeoutSeconds: 960,
    maxReceiveCount: 5,
  },
  screenshots: {
    id: 'ScreenshotsQueue',
    envVar: 'SCREENSHOTS_QUEUE_URL',
    // A capture (browser start, page load, screenshot, upload) takes well under this.
    visibilityTimeoutSeconds: 120,
    maxReceiveCount: 3,
  },
  abuseScans: {
    id: 'AbuseScansQueue',
    envVar: 'ABUSE_SCANS_QUEUE_URL',
    // Longer than the abuse-scans worker's 120 s timeout: a scan in progress is never handed to a second consumer.
    visibilityTimeoutSeconds: 180,
    maxReceiveCount: 3,
  },
  sslRetries: {
    id: 'SslRetriesQueue',
    envVar: 'SSL_RETRY_QUEUE_URL',
    visibilityTimeoutSeconds: 60,
    maxReceiveCount: 5,
  },
  geoFilters: {
    id: 'GeoFiltersQueue',
    envVar: 'GEO_FILTERS_QUEUE_URL',
    // A saved geo policy CloudFront has not taken yet: tried again each minute (the worker takes seconds)
    // for about half an hour, then the message rests in the dead-letter queue and the next PATCH applies it.
    visibilityTimeoutSeconds: 60,
    maxReceiveCount: 30,
  },
  functionLambdas: {
    id: 'FunctionLambdasQueue',
    envVar: 'FUNCTION_LAMBDAS_QUEUE_URL',
    // Longer than the function-lambdas worker's 150 s timeout (a new VPC Lambda may take a minute or two to be
    // Active): a deployment being prepared is never handed to a second consumer. A failed prepare is tried again,
    // then rests in the dead-letter queue; the first request makes the Lambda then (the fallback).
    visibilityTimeoutSeconds: 180,
    maxReceiveCount: 3,
  },
  callbacks: {
    id: 'CallbacksQueue',
    envVar: 'CALLBACKS_QUEUE_URL',
    // Completion callbacks (lib/functions/callbacks.ts): one message per attempt, the retries as message delays.
    // Longer than the function-callbacks worker's 30 s timeout (one 10 s attempt and its record): an attempt in
    // progress is never handed to a second consumer. A message that keeps failing (the platform's fault, not the
    // receiver's) rests in the dead-letter queue.
    visibilityTimeoutSeconds: 60,
    maxReceiveCount: 3,
  },
  builds: {
    id: 'BuildsQueue',
    envVar: 'BUILDS_QUEUE_URL',
    // Longer than the builds worker's 300 s timeout: a build being started or followed is never handed to a second consumer.
    visibilityTimeoutSeconds: 360,
    maxReceiveCount: 5,
  },
} as const;

export const scheduleGroupDefinition = {
  id: 'ScheduleGroup',
  envVar: 'SCHEDULE_GROUP',
  /** Role EventBridge Scheduler assumes to invoke schedule targets. */
  roleEnvVar: 'SCHEDULER_ROLE_ARN',
} as const;

/**
 * Secrets handlers need at run time. A handler reads the value from `envVar`;
 * the local platform sets that directly, while in the cloud the stack passes
 * only the secret's ARN in `arnEnvVar` and lib/aws/secrets.ts fetches the value
 * on cold start, so the value never appears in the function configuration.
 */
export const secretDefinitions = {
  /** HMAC key of Git connect state tokens (lib/git/connect-state.ts). */
  gitState: { id: 'GitStateSecret', envVar: 'GIT_STATE_SECRET', arnEnvVar: 'GIT_STATE_SECRET_ARN' },
  /**
   * The forge tokens' signing keys (lib/git/forge-keys.ts): a seed (or a JSON key set while a rotation
   * runs) from which each ES256 private key is derived; the public halves are published at /.well-known/jwks.json.
   */
  forgeSigning: { id: 'ForgeSigningKey', envVar: 'FORGE_SIGNING_KEY', arnEnvVar: 'FORGE_SIGNING_KEY_ARN' },
  /** AES-256 key of environment variable values (lib/env/encryption.ts). */
  envEncryption: { id: 'EnvEncryptionKey', envVar: 'ENV_ENCRYPTION_KEY', arnEnvVar: 'ENV_ENCRYPTION_KEY_ARN' },
  /** The billing provider's webhook signing secret (`whsec_...`), which verifies its deliveries (lib/billing/signature.ts). */
  billingWebhook: { id: 'BillingWebhookSecret', envVar: 'BILLING_WEBHOOK_SECRET', arnEnvVar: 'BILLING_WEBHOOK_SECRET_ARN' },
  /**
   * The value the sites distribution sends in `x-slipway-origin-secret` to the serve-site function URL that takes every
   * method but GET and HEAD (a public URL: Lambda refuses an unsigned body behind origin access control), which
   * answers 403 without it (infra/site-serving.ts, handlers/edge/serve-site.ts).
   */
  siteOrigin: { id: 'SiteOriginSecret', envVar: 'SITE_ORIGIN_SECRET', arnEnvVar: 'SITE_ORIGIN_SECRET_ARN' },
} as const;

export type BucketName = keyof typeof bucketDefinitions;
export type QueueName = keyof typeof queueDefinitions;
export type SecretName = keyof typeof secretDefinitions;
