import {
  bucketDefinitions,
  queueDefinitions,
  type SecretName,
  scheduleGroupDefinition,
  secretDefinitions,
  tableDefinition,
} from './resources.ts';

import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * A platform's configuration: its resources' names, its domains and ports,
 * its secrets and its tuning knobs, as one object rather than the process
 * environment, so that one process can hold more than one platform.
 *
 * - A deployed Lambda has one platform: the default PlatformEnv, made once
 *   per cold start, owns nothing and reads the Lambda's environment (which
 *   never changes while it runs), and holds the secrets fetched at cold start
 *   (lib/aws/secrets.ts).
 * - The local platform (lib/local/platform.ts) builds one per start: it owns
 *   what that platform alone has (resource names, domains, ports, endpoints,
 *   secrets) and runs each API request, hostname handler, driver loop and
 *   worker invocation inside it (`run`, Node's AsyncLocalStorage). Every
 *   other name (the knobs: budgets, cache times, SCREENSHOT_CAPTURE...) falls
 *   back to process.env at call time, so a value set there takes effect on
 *   every platform of the process at once.
 * - Code running outside any platform's call (a test calling lib/ directly)
 *   sees the platform started last that still runs, else the environment.
 *
 * Nothing here is read once and kept: each getter reads at call time.
 */
export class PlatformEnv {
  /** Secret values fetched from Secrets Manager (lib/aws/secrets.ts), with when; a value given in `owned` or the environment wins. */
  readonly fetchedSecrets = new Map<SecretName, { value: string; at: number }>();
  /** One fetch per secret at a time, shared by every caller that asks while it is in flight. */
  readonly secretFetches = new Map<SecretName, Promise<void>>();

  /** `owned`: held by reference, so the local platform fills it in as its parts come up (and a test may retune one). */
  constructor(readonly owned: Record<string, string> = {}) {}

  /** The platform's value of a variable: its own, else the process environment's. */
  variable(name: string): string | undefined {
    return Object.hasOwn(this.owned, name) ? this.owned[name] : process.env[name];
  }

  /** Runs `fn` as a call of this platform: config and per-platform state inside it (and what it starts) are this platform's. */
  run<T>(fn: () => T): T {
    return current.run(this, fn);
  }
}

const current = new AsyncLocalStorage<PlatformEnv>();
/** The Lambda's: built once per cold start from its environment. */
const fromEnvironment = new PlatformEnv();
/** Local platforms running in this process, oldest first: the last is the default outside any call. */
const running: PlatformEnv[] = [];

/** The platform the current call belongs to. */
export function platformEnv(): PlatformEnv {
  return current.getStore() ?? running.at(-1) ?? fromEnvironment;
}

/** A local platform starts: it is the default outside any call until `stop` (returned) or a later start. */
export function startPlatformEnv(env: PlatformEnv): () => void {
  running.push(env);
  return () => {
    const at = running.indexOf(env);
    if (at >= 0) running.splice(at, 1);
  };
}

/**
 * Module state that holds what was read of a platform's resources (caches, counters awaiting a flush):
 * one value per platform, made on first use in it, so two platforms of one process never see each other's.
 */
export function perPlatform<T>(make: () => T): () => T {
  const held = new WeakMap<PlatformEnv, T>();
  return () => {
    const env = platformEnv();
    let value = held.get(env);
    if (value === undefined) {
      value = make();
      held.set(env, value);
    }
    return value;
  };
}

const variable = (name: string): string | undefined => platformEnv().variable(name);

function required(name: string): string {
  const value = variable(name);
  if (!value) throw new Error(`Configuration variable ${name} is not set`);
  return value;
}

function optional(name: string, fallback: string): string {
  const value = variable(name);
  return value === undefined || value === '' ? fallback : value;
}

function positiveInteger(name: string, fallback: number): number {
  const value = Number(variable(name));
  return Number.isInteger(value) && value > 0 ? value : fallback;
}

/** A positive number (fractions allowed: tests shorten seconds below one), else the fallback. */
function positiveNumber(name: string, fallback: number): number {
  const value = Number(variable(name));
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

/** A TCP port to listen on (0: any free one), else the fallback. */
function port(name: string, fallback: number): number {
  const raw = variable(name);
  const value = Number(raw);
  return raw !== undefined && raw !== '' && Number.isInteger(value) && value >= 0 && value <= 65_535 ? value : fallback;
}

/** A secret's value: given (the platform's own, or the environment's), else fetched at cold start (lib/aws/secrets.ts). */
function requiredSecret(name: SecretName): string {
  const { envVar } = secretDefinitions[name];
  const value = variable(envVar) || platformEnv().fetchedSecrets.get(name)?.value;
  if (!value) throw new Error(`Configuration variable ${envVar} is not set`);
  return value;
}

/** A whole number of at least 0 when set, else the fallback. */
function wholeNumber(name: string, fallback: number): number {
  const raw = variable(name);
  const value = Number(raw);
  return raw && Number.isInteger(value) && value >= 0 ? value : fallback;
}

export const config = {
  tableName: () => required(tableDefinition.envVar),
  bucket: (name: keyof typeof bucketDefinitions) => required(bucketDefinitions[name].envVar),
  queueUrl: (name: keyof typeof queueDefinitions) => required(queueDefinitions[name].envVar),
  scheduleGroup: () => required(scheduleGroupDefinition.envVar),
  schedulerRoleArn: () => required(scheduleGroupDefinition.roleEnvVar),
  /** Domain under which sites are served: {subdomain}.{siteDomain}. */
  siteDomain: () => optional('SITE_DOMAIN', 'slipway.site'),
  /** Domain under which functions are served: {name}-{subdomain}.{functionDomain}. */
  functionDomain: () => optional('FUNCTION_DOMAIN', 'fn.slipway.site'),
  /** Scheme of public site and function URLs (http only on the local platform). */
  publicScheme: () => optional('PUBLIC_SCHEME', 'https'),
  /** Port suffix of public URLs, e.g. ":3000" on the local platform. */
  publicPortSuffix: () => optional('PUBLIC_PORT_SUFFIX', ''),
  /** Bytes of deployed objects a site server keeps in memory (lib/sites/object-cache.ts). */
  siteObjectCacheBytes: () => positiveInteger('SITE_OBJECT_CACHE_BYTES', 64 * 1024 * 1024),
  /** Objects larger than this are streamed from storage on every request, never kept. */
  siteObjectCacheMaxObjectBytes: () => positiveInteger('SITE_OBJECT_CACHE_MAX_OBJECT_BYTES', 1024 * 1024),
  /** `process` where every table write serving must see is made by this process (the local platform): lib/sites/serving-cache.ts. */
  siteRecordCache: () => optional('SITE_RECORD_CACHE', 'off'),
  /** Browser origins allowed to call the API (the dashboard), comma separated. */
  corsOrigins: () =>
    optional('CORS_ORIGINS', '')
      .split(',')
      .map((o) => o.trim())
      .filter(Boolean),
  /** Sender of platform e-mail (a verified SES identity). */
  mailFrom: () => optional('MAIL_FROM', 'no-reply@slipway.localhost'),
  /**
   * Where SES is reached, when not at the AWS endpoint: the local platform's outbox (lib/local/mail-outbox.ts),
   * which records each mail and passes it on. Unset in the cloud.
   */
  mailEndpoint: () => variable('SES_ENDPOINT_URL') || variable('AWS_ENDPOINT_URL') || undefined,
  /** The dashboard's origin (scheme://host[:port]): its links in mail, and the only origin a cookie-authenticated write may come from. */
  consoleUrl: () => optional('CONSOLE_URL', 'https://app.slipway.site').replace(/\/+$/, ''),
  /** Dashboard page that confirms an e-mail address; the link adds `?token=`. */
  emailConfirmUrl: () => optional('EMAIL_CONFIRM_URL', 'https://app.slipway.site/confirm-email'),
  // Integrations: Git hosting connect, SSO discovery, environment variables
  /** The Git hosting app's install page; `state` is appended to it. */
  gitAppInstallUrl: () => optional('GIT_APP_INSTALL_URL', 'https://github.com/apps/slipway-local/installations/new'),
  /**
   * HMAC key of Git connect state tokens. No default: a guessable key would let
   * anyone forge a state. The local platform generates one per run; the stack
   * reads it from a Secrets Manager secret.
   */
  gitStateSecret: () => requiredSecret('gitState'),
  /**
   * The forge tokens' signing key set (lib/git/forge-keys.ts). No default: the local platform makes one
   * (kept in .slipway/state/), the stack generates one into Secrets Manager.
   */
  forgeSigningKey: () => requiredSecret('forgeSigning'),
  /** The forge tokens' `iss`: the platform's public origin (the console's, where /.well-known/jwks.json answers). */
  forgeTokenIssuer: () => (variable('FORGE_TOKEN_ISSUER') || optional('CONSOLE_URL', 'https://app.slipway.site')).replace(/\/+$/, ''),
  /** Local use only: lets SSO discovery fetch http:// issuers on loopback addresses. Never set in the cloud. */
  ssoAllowLoopbackHttp: () => optional('SSO_ALLOW_LOOPBACK_HTTP', 'false') === 'true',
  /** Whole-request budget of a discovery document fetch. */
  ssoDiscoveryTimeoutMs: () => Number(optional('SSO_DISCOVERY_TIMEOUT_MS', '5000')),
  /** Callback registered in identity providers; default `${baseUrl}/api/v1/auth/sso/callback`. */
  ssoRedirectUri: () => variable('SSO_REDIRECT_URI') || undefined,
  /** Where advisories (`warnings[].docs_url`) point. */
  docsBaseUrl: () => optional('DOCS_BASE_URL', 'https://docs.slipway.dev'),
  /**
   * AES-256 key (32 bytes, base64 or 64 hex characters) encrypting environment
   * variable values at rest. The local platform generates one per run; the stack
   * reads it from a Secrets Manager secret (lib/aws/secrets.ts).
   */
  envEncryptionKey: () => requiredSecret('envEncryption'),
  /**
   * The billing provider's webhook signing secret (Stripe's `whsec_...` of the endpoint). No default: a
   * known key would let anyone forge subscription changes. The local platform generates one per run unless
   * set; the stack reads it from a Secrets Manager secret the operator fills in (docs/deploy.md).
   */
  billingWebhookSecret: () => requiredSecret('billingWebhook'),
  // Custom domains (lib/domains/)
  /**
   * DNS servers that domain verification asks, as `host` or `host:port`, comma
   * separated (`127.0.0.1:5300` for a test server on loopback). Unset: the
   * machine's resolver (in Lambda, the VPC or AWS resolver).
   */
  dnsResolvers: () =>
    optional('DNS_RESOLVER', '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  /** Budget of one DNS query of a verification, per try (two tries). */
  dnsTimeoutMs: () => Number(optional('DNS_TIMEOUT_MS', '2000')),
  /**
   * Request header that carries the visitor's ISO 3166-1 alpha-2 country, read when a custom
   * domain with a geo rule is served (lib/sites/serve.ts). CloudFront sets `CloudFront-Viewer-Country`;
   * locally any client or proxy in front of the platform may set it. Lower-cased here: Node and
   * API Gateway events give header names lower-case.
   */
  geoCountryHeader: () => optional('GEO_COUNTRY_HEADER', 'CloudFront-Viewer-Country').trim().toLowerCase(),
  /**
   * In the cloud a custom domain's geo rule is its own distribution's geo restriction, applied at
   * the edge before the request reaches the serve-site function, which then sees no viewer country
   * (the sites distribution forwards none, and behind a domain's distribution it would be the
   * country of that distribution's edge). The stack sets GEO_RULES_AT_EDGE=true for serve-site;
   * the local platform leaves it unset and applies the rule itself from GEO_COUNTRY_HEADER.
   */
  geoRulesAtEdge: () => variable('GEO_RULES_AT_EDGE') === 'true',
  // TLS of custom domains (lib/domains/tls.ts, docs/domains.md)
  /** Delay before the first automatic retry of a failed SSL attempt; each later retry waits twice the one before. */
  sslRetryBaseDelaySeconds: () => positiveInteger('SSL_RETRY_BASE_DELAY_SECONDS', 60),
  /** Cap of the retry delay; SQS delays a message at most 900 s, so a larger value is held to 900. */
  sslRetryMaxDelaySeconds: () => Math.min(900, positiveInteger('SSL_RETRY_MAX_DELAY_SECONDS', 900)),
  /** Attempts of one automatic chain (the first included); the last failed one goes to the queue's dead-letter queue. */
  sslMaxAttempts: () => positiveInteger('SSL_MAX_ATTEMPTS', 6),
  /** While a certificate waits for its DNS validation, how often the worker looks again. */
  sslCheckIntervalSeconds: () => Math.min(900, positiveInteger('SSL_CHECK_INTERVAL_SECONDS', 120)),
  /** A certificate still not validated this long after it was requested fails the attempt (VALIDATION_TIMED_OUT). */
  // 0 is allowed: a certificate must already be issued when an attempt first looks (the tests' failing certificate).
  sslValidationTimeoutSeconds: () => wholeNumber('SSL_VALIDATION_TIMEOUT_SECONDS', 3600),
  // Trust and safety (lib/abuse/)
  /** `off` switches abuse-report intake off: the endpoint answers 503 ABUSE_INTAKE_UNAVAILABLE and records nothing. */
  abuseIntakeEnabled: () => optional('ABUSE_INTAKE', 'on') !== 'off',
  /** Abuse reports one submitter (an IP address; an e-mail address when one is given) may file per hour. */
  abuseReportsPerSubmitterPerHour: () => positiveInteger('ABUSE_REPORTS_PER_SUBMITTER_PER_HOUR', 10),
  /** Abuse reports the whole platform takes per hour, whoever sends them. */
  abuseReportsPlatformPerHour: () => positiveInteger('ABUSE_REPORTS_PLATFORM_PER_HOUR', 500),
  // The sweep of cloud resources no record names (handlers/workers/cloud-sweep.ts)
  /**
   * A user-function Lambda younger than this is never swept: one being made may not have its record read yet.
   * SWEEP_MIN_AGE_SECONDS; 0 in tests.
   */
  sweepMinAgeSeconds: () => wholeNumber('SWEEP_MIN_AGE_SECONDS', 1800),
  /** Name prefix of the user-function Lambdas (the stack's functions runtime sets it); unset where there are none (locally). */
  functionsLambdaPrefix: () => variable('FUNCTIONS_LAMBDA_PREFIX') || undefined,
  /**
   * Local platform: sandboxed runner processes kept started ahead of queued invocations (each invocation still
   * gets one of its own, which exits when it returns). FUNCTIONS_QUEUED_PREFORK; 0 starts each on demand.
   */
  functionsQueuedPrefork: () => wholeNumber('FUNCTIONS_QUEUED_PREFORK', 3),
  // Builds (lib/builds/, docs/builds.md)
  /** A build's time budget: past it the build is stopped and fails (15 minutes; tests shorten it). */
  buildTimeBudgetMs: () => positiveInteger('BUILD_TIME_BUDGET_MS', 15 * 60 * 1000),
  /**
   * A build still `building` (or published without its end recorded) this long past its time budget lost its
   * worker: the next read of it ends it as a platform failure (lib/builds/lost.ts). Also how long past the budget
   * a team's place stays held for it.
   */
  buildLostGraceMs: () => positiveInteger('BUILD_LOST_GRACE_MS', 15 * 60 * 1000),
  /** A build step with no output this long prints that it is still running, and again after each further such stretch (30 s; tests shorten it). */
  buildHeartbeatMs: () => positiveInteger('BUILD_HEARTBEAT_MS', 30_000),
  /** Memory cap of one build (the local sandbox's memory cgroup; the CodeBuild compute type in the cloud). */
  buildMemoryMb: () => positiveInteger('BUILD_MEMORY_MB', 3072),
  /** Lines of a build's log kept; past it one line says the log was cut, and the build goes on. */
  buildLogMaxLines: () => positiveInteger('BUILD_LOG_MAX_LINES', 5000),
  /** Builds of one team that run at once; a team's further builds wait in the queue (docs/builds.md). */
  buildConcurrencyPerTeam: () => positiveInteger('BUILD_CONCURRENCY_PER_TEAM', 2),
  /** How long one builds-worker call follows a running build before it hands the rest to a later message. */
  buildFollowWindowMs: () => positiveInteger('BUILD_FOLLOW_WINDOW_MS', 120_000),
  /** Between two looks at a running build (its log, its cancel flag) while following it. */
  buildPollMs: () => positiveInteger('BUILD_POLL_MS', 1000),
  /** Seconds a build waits in the queue when its team already runs as many builds as it may. */
  buildRequeueDelaySeconds: () => Math.min(900, positiveInteger('BUILD_REQUEUE_DELAY_SECONDS', 5)),
  /** Local use only: lets builds fetch http:// repositories on loopback addresses (a repository served on this machine). */
  gitAllowLoopbackHttp: () => optional('GIT_ALLOW_LOOPBACK_HTTP', 'false') === 'true',
  /** Where the local build host keeps each project's package-manager store, keyed by lockfile hash (default: a folder under the OS temp dir). */
  buildCacheDir: () => variable('BUILD_CACHE_DIR') || undefined,
  // Functions (lib/functions/): tests shorten these
  /** Queued invocations one client IP may make per minute: the spec's 20, raised for tests that are not about the cap. */
  functionsQueuedRatePerMinute: () => positiveInteger('FUNCTIONS_QUEUED_RATE_PER_MINUTE', 20),
  /** How long an invocation's request, result and console output are kept: 7 days. */
  functionsInvocationRetentionMs: () => positiveNumber('FUNCTIONS_INVOCATION_RETENTION_MS', 7 * 86_400_000),
  /**
   * Local use only: completion callbacks may go to http:// and https:// URLs on loopback addresses (a receiver on
   * this machine). Never set in the cloud, where only https:// to public addresses is called.
   */
  functionsCallbackAllowLoopback: () => optional('FUNCTIONS_CALLBACK_ALLOW_LOOPBACK', '0') === '1',
  /**
   * Seconds before each retry of a completion callback that got no 2xx: 1 s, 5 s, 30 s, 2 min, 10 min (6 attempts
   * in all). Tests shorten them (comma-separated); each is an SQS message delay, so at most 900.
   */
  functionsCallbackRetryDelaysSeconds: (): number[] => {
    const raw = variable('FUNCTIONS_CALLBACK_RETRY_DELAYS_SECONDS');
    const delays = raw ? raw.split(',').map((d) => Number(d.trim())) : [1, 5, 30, 120, 600];
    if (delays.some((d) => !Number.isInteger(d) || d < 0 || d > 900))
      throw new Error('FUNCTIONS_CALLBACK_RETRY_DELAYS_SECONDS must be whole seconds from 0 to 900, comma-separated');
    return delays;
  },
  /** One completion callback attempt's whole exchange (connect, send, the reply's status): 10 s. */
  functionsCallbackTimeoutMs: () => positiveNumber('FUNCTIONS_CALLBACK_TIMEOUT_MS', 10_000),
  /** The request budget of a function: 60 s. */
  functionsBudgetMs: () => positiveNumber('FUNCTIONS_BUDGET_MS', 60_000),
  /** An instance without traffic this long is stopped (about two minutes). */
  functionsIdleMs: () => positiveNumber('FUNCTIONS_IDLE_MS', 120_000),
  /** Between two flushes of the door's telemetry counters. */
  functionsTelemetryFlushMs: () => positiveNumber('FUNCTIONS_TELEMETRY_FLUSH_MS', 5_000),
  /** The container door's port for door traffic (0: any free port, for tests); the name is cloudHostVariables.doorPort. */
  doorPort: () => port('SLIPWAY_DOOR_PORT', 8080),
  /** The container door's health-check port (0: any free port); the name is cloudHostVariables.doorHealthPort. */
  doorHealthPort: () => port('SLIPWAY_DOOR_HEALTH_PORT', 8081),
  /** A function's route is read at most this often per hostname; 0 reads it on every request (the local platform). */
  /**
   * How long a door trusts what it read of a function's open live tails (lib/functions/tail.ts): a tail opened
   * is seen within this, an idle function costs one read per this per door process. FUNCTIONS_TAIL_CACHE_MS.
   */
  functionsTailCacheMs: () => {
    const value = Number(variable('FUNCTIONS_TAIL_CACHE_MS'));
    return variable('FUNCTIONS_TAIL_CACHE_MS') && Number.isFinite(value) && value >= 0 ? value : 3_000;
  },
  /** Name prefix of live tails' short-lived queues (FUNCTIONS_TAIL_QUEUE_PREFIX; the stack and local provisioning set it). */
  functionsTailQueuePrefix: () => required('FUNCTIONS_TAIL_QUEUE_PREFIX'),
  functionsRouteCacheMs: () => {
    const value = Number(variable('FUNCTIONS_ROUTE_CACHE_MS'));
    return Number.isFinite(value) && value >= 0 ? value : 1_000;
  },
  /** How long a queued invocation's task may take to be placed, pull the image and start. */
  functionsTaskStartTimeoutMs: () => positiveNumber('FUNCTIONS_TASK_START_TIMEOUT_MS', 90_000),
  /** How often the invocations worker looks at the task and the result object. */
  functionsTaskPollMs: () => positiveNumber('FUNCTIONS_TASK_POLL_MS', 1000),
  /**
   * The cloud host: blank runner tasks kept started ahead of queued invocations (docs/functions.md, "The warm
   * pool"). The stack sets it from the `functionsWarmTasks` context; unset or 0, every invocation starts its task.
   */
  functionsWarmTasks: () => {
    const value = Number(variable('FUNCTIONS_WARM_TASKS') ?? 0);
    return Number.isInteger(value) && value > 0 ? Math.min(value, 10) : 0;
  },
  /** Local platform: blank runner processes kept started ahead of requests (FUNCTIONS_PREFORK, default 2). */
  functionsPrefork: () => {
    const raw = variable('FUNCTIONS_PREFORK');
    const value = Number(raw);
    return raw !== undefined && raw.trim() !== '' && Number.isFinite(value) && value >= 0 ? Math.floor(value) : 2;
  },
  /**
   * A variable the stack's functions runtime gives the router and the invocations worker, by the name
   * lib/functions/hosts/cloud/variables.ts gives it (`cloudHostVariables`); undefined when unset.
   */
  functionsRuntimeVariable: (name: string) => variable(name) || undefined,
  /** Between two flushes of a site server's visit counters. */
  siteAnalyticsFlushMs: () => positiveNumber('SITE_ANALYTICS_FLUSH_MS', 10_000),
  // Keyword scans of published deployments (lib/abuse/scans.ts)
  /** Bytes read of one file; the rest is not scanned and the scan is `truncated`. */
  abuseScanFileMaxBytes: () => positiveInteger('ABUSE_SCAN_FILE_MAX_BYTES', 512 * 1024),
  /** Bytes read in all for one scan; files past it are not scanned and the scan is `truncated`. */
  abuseScanMaxBytes: () => positiveInteger('ABUSE_SCAN_MAX_BYTES', 8 * 1024 * 1024),
  /** Text files read for one scan at most. */
  abuseScanMaxFiles: () => positiveInteger('ABUSE_SCAN_MAX_FILES', 2000),
  // Lifetimes and budgets of teams, projects and uploads
  /** Seconds from a team's deletion request to its purge: 30 days, or `TEAM_PURGE_DELAY_SECONDS` (tests). */
  teamPurgeDelaySeconds: () => positiveNumber('TEAM_PURGE_DELAY_SECONDS', 30 * 86_400),
  /** Seconds a provisional project lives unless claimed (2 h 15 min). */
  provisionalExpirySeconds: () => positiveNumber('PROVISIONAL_EXPIRY_SECONDS', 8100),
  /** How long an upload session accepts files and a finalize. */
  uploadSessionSeconds: () => positiveNumber('UPLOAD_SESSION_SECONDS', 7200),
  /** How long one finalize call copies and checks contents before it answers and lets the next call carry on. */
  finalizeBudgetMs: () => positiveNumber('FINALIZE_BUDGET_MS', 20_000),
  /** Copies one finalize call makes between two looks at the clock (500). */
  finalizeCopyChunk: () => positiveInteger('FINALIZE_COPY_CHUNK', 500),
  /** How long a duplicate request under an Idempotency-Key waits for the first to finish before answering 409 (15 s). */
  idempotencyWaitMs: () => positiveNumber('IDEMPOTENCY_WAIT_MS', 15_000),
  // Screenshots (lib/screenshots/)
  /** How long a page may take to load, read at each capture. */
  screenshotPageTimeoutMs: () => Number(variable('SCREENSHOT_PAGE_TIMEOUT_MS') || 20_000),
  /** Which Chromium: `system` (a binary on this machine) or `serverless` (@sparticuz/chromium, the capture image's). */
  screenshotChromium: (): 'system' | 'serverless' => {
    const value = variable('SCREENSHOT_CHROMIUM') || 'system';
    if (value !== 'system' && value !== 'serverless') throw new Error(`SCREENSHOT_CHROMIUM must be system or serverless, not "${value}"`);
    return value;
  },
  /** Where the system Chromium binary is looked for (Debian's, unless CHROMIUM_PATH). */
  chromiumPath: () => variable('CHROMIUM_PATH') || '/usr/bin/chromium',
  /** The platform's API origin the capture worker reports its results to. */
  apiBaseUrl: () => variable('API_BASE_URL') ?? '',
  /** The Lambda runtime API (`host:port`) in a Lambda, which a captured page must not reach; unset elsewhere. */
  lambdaRuntimeApi: () => variable('AWS_LAMBDA_RUNTIME_API'),
  /** The CodeBuild project builds run in (lib/builds/cloud-host.ts `cloudBuildVariables`); unset where builds run locally. */
  buildsCodebuildProject: () => variable('BUILDS_CODEBUILD_PROJECT') || undefined,
  /**
   * The ARN of the worker a one-time schedule invokes, from the variable the worker's row names (lib/workers.ts):
   * each function is given only the ARNs it schedules.
   */
  scheduleTargetArn: (name: string) => variable(name) || undefined,
  /** A secret's value when set (the local platform, tests, or loaded at cold start by lib/aws/secrets.ts). */
  secretValue: (name: SecretName) => variable(secretDefinitions[name].envVar) || platformEnv().fetchedSecrets.get(name)?.value || undefined,
  /** The ARN of a secret's Secrets Manager secret (the stack sets it; the value is fetched at cold start). */
  secretArn: (name: SecretName) => variable(secretDefinitions[name].arnEnvVar) || undefined,
  /** The least severe level logged (LOG_LEVEL, else Lambda's advanced logging level), upper-cased; INFO by default. */
  logLevel: () => (variable('LOG_LEVEL') ?? variable('AWS_LAMBDA_LOG_LEVEL') ?? variable('POWERTOOLS_LOG_LEVEL') ?? 'INFO').toUpperCase(),
  awsRegion: () => optional('AWS_REGION', 'us-east-1'),
  /** The credentials requests are signed with (Lambda's role, or the local platform's `test`); missing ones are undefined. */
  awsCredentials: () => ({
    accessKeyId: variable('AWS_ACCESS_KEY_ID'),
    secretAccessKey: variable('AWS_SECRET_ACCESS_KEY'),
    sessionToken: variable('AWS_SESSION_TOKEN') || undefined,
  }),
  /** Set only when talking to a local AWS endpoint (moto or LocalStack). */
  awsEndpoint: () => variable('AWS_ENDPOINT_URL') || undefined,
  /** The account and region `cdk` deploys to (the CDK CLI sets them), or undefined for an environment-agnostic stack. */
  cdkDeployEnvironment: () =>
    variable('CDK_DEFAULT_ACCOUNT') ? { account: variable('CDK_DEFAULT_ACCOUNT'), region: variable('CDK_DEFAULT_REGION') } : undefined,
  /** Any variable of the platform, for code that passes a platform's settings on (the synthesized mode's Lambdas). */
  variable,
};
