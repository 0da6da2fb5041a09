/** Single-table key shapes, in one place. */
export const keys = {
  user: (userId: string) => ({ pk: `USER#${userId}`, sk: 'USER' }),
  userEmail: (email: string) => ({ pk: `EMAIL#${email.toLowerCase()}`, sk: 'EMAIL' }),
  team: (teamId: string) => ({ pk: `TEAM#${teamId}`, sk: 'TEAM' }),
  teamSlug: (slug: string) => ({ pk: `TEAMSLUG#${slug}`, sk: 'TEAMSLUG' }),
  membership: (teamId: string, userId: string) => ({ pk: `TEAM#${teamId}`, sk: `MEMBER#${userId}` }),
  membershipByUser: (userId: string, teamId: string) => ({ gsi1pk: `USER#${userId}`, gsi1sk: `TEAM#${teamId}` }),
  token: (tokenHash: string) => ({ pk: `TOKEN#${tokenHash}`, sk: 'TOKEN' }),
  /**
   * The credentials scoped to a team, in one gsi1 partition: its API keys by key id, the sessions opened for it
   * by token hash. The listing reads the keys; the team's purge deletes the whole partition.
   */
  apiKeyByTeam: (teamId: string, keyId: string) => ({ gsi1pk: `TEAMAPIKEYS#${teamId}`, gsi1sk: `APIKEY#${keyId}` }),
  sessionByTeam: (teamId: string, tokenHash: string) => ({ gsi1pk: `TEAMAPIKEYS#${teamId}`, gsi1sk: `SESSION#${tokenHash}` }),
  /** An e-mail sign-in link, by the SHA-256 of its token (lib/identity/sign-in-link-records.ts). */
  signInLink: (tokenHash: string) => ({ pk: `SIGNINLINK#${tokenHash}`, sk: 'SIGNINLINK' }),
  // Integrations: a project's environment variables, one item per environment and name
  envVariable: (projectId: string, environment: string, name: string) => ({ pk: `PROJECT#${projectId}`, sk: `ENV#${environment}#${name}` }),
  envVariablePrefix: (projectId: string, environment?: string) => ({
    pk: `PROJECT#${projectId}`,
    skPrefix: environment ? `ENV#${environment}#` : 'ENV#',
  }),
  // Accounts: notices, e-mail confirmation, personal-data records
  notice: (key: string) => ({ pk: `NOTICE#${key}`, sk: 'NOTICE' }),
  /** The notice catalogue, newest last, as one index partition (the catalogue is small). */
  noticeCatalogue: (publishedAt: string, key: string) => ({ gsi1pk: 'NOTICES', gsi1sk: `${publishedAt}#${key}` }),
  noticeWatermark: (userId: string) => ({ pk: `USER#${userId}`, sk: 'NOTICE_WATERMARK' }),
  noticeDismissal: (userId: string, teamId: string, key: string) => ({ pk: `USER#${userId}`, sk: `NOTICE_DISMISSAL#${teamId}#${key}` }),
  emailConfirmation: (tokenHash: string) => ({ pk: `EMAILCONFIRM#${tokenHash}`, sk: 'EMAILCONFIRM' }),
  /** A fixed-window rate counter: `scope` names the limit and its subject, `windowStart` the window (epoch seconds). */
  rateWindow: (scope: string, windowStart: number) => ({ pk: `RATE#${scope}#${windowStart}`, sk: 'RATE' }),
  invitation: (teamId: string, invitationId: string) => ({ pk: `TEAM#${teamId}`, sk: `INVITATION#${invitationId}` }),
  invitationByEmail: (email: string, createdAt: string, invitationId: string) => ({
    gsi1pk: `INVITEE#${email.toLowerCase()}`,
    gsi1sk: `INVITATION#${createdAt}#${invitationId}`,
  }),
  feedback: (teamId: string, feedbackId: string) => ({ pk: `TEAM#${teamId}`, sk: `FEEDBACK#${feedbackId}` }),
  feedbackByUser: (userId: string, createdAt: string, feedbackId: string) => ({
    gsi1pk: `USER#${userId}`,
    gsi1sk: `FEEDBACK#${createdAt}#${feedbackId}`,
  }),
  emailChange: (userId: string, createdAt: string, changeId: string) => ({
    pk: `USER#${userId}`,
    sk: `EMAIL_CHANGE#${createdAt}#${changeId}`,
  }),
  credentialCutoff: (userId: string, reason: string) => ({ pk: `USER#${userId}`, sk: `CREDENTIAL_CUTOFF#${reason}` }),
  stepUpGrant: (userId: string, createdAt: string, grantId: string) => ({
    pk: `USER#${userId}`,
    sk: `STEP_UP_GRANT#${createdAt}#${grantId}`,
  }),
  // Sites: projects, deployments, upload sessions (layout in docs/sites.md)
  project: (projectId: string) => ({ pk: `PROJECT#${projectId}`, sk: 'PROJECT' }),
  projectByTeam: (teamId: string, createdAt: string, projectId: string) => ({
    gsi1pk: `TEAMPROJECTS#${teamId}`,
    gsi1sk: `${createdAt}#${projectId}`,
  }),
  subdomainHold: (subdomain: string) => ({ pk: `SUBDOMAIN#${subdomain}`, sk: 'SUBDOMAIN' }),
  projectName: (teamId: string, name: string) => ({ pk: `TEAM#${teamId}`, sk: `PROJECTNAME#${name.toLowerCase()}` }),
  /** How many projects a team has, for the plan's site limit. */
  teamProjectCount: (teamId: string) => ({ pk: `TEAM#${teamId}`, sk: 'PROJECTCOUNT' }),
  /** The team's open upload sessions (id -> expiry), for the plan's session cap. */
  teamUploadSlots: (teamId: string) => ({ pk: `TEAM#${teamId}`, sk: 'UPLOADSLOTS' }),
  deployment: (projectId: string, deploymentId: string) => ({ pk: `PROJECT#${projectId}`, sk: `DEPLOYMENT#${deploymentId}` }),
  /** A project's deployments by creation time (the listing's index): only deployment items, never their log's. */
  deploymentByProject: (projectId: string, createdAt: string, deploymentId: string) => ({
    gsi1pk: `PROJECTDEPLOYMENTS#${projectId}`,
    gsi1sk: `${createdAt}#${deploymentId}`,
  }),
  uploadSession: (uploadId: string) => ({ pk: `UPLOAD#${uploadId}`, sk: 'UPLOAD' }),
  /** What one upload request of a session stored (lib/publishing/received.ts); under the session's partition. */
  uploadReceived: (uploadId: string, entryId: string) => ({ pk: `UPLOAD#${uploadId}`, sk: `RECEIVED#${entryId}` }),
  uploadSessionByProject: (projectId: string, createdAt: string, uploadId: string) => ({
    gsi1pk: `PROJECTUPLOADS#${projectId}`,
    gsi1sk: `${createdAt}#${uploadId}`,
  }),
  /** A blob the team holds: which published object carries those bytes (lib/publishing/blobs.ts). */
  heldBlob: (teamId: string, hash: string) => ({ pk: `BLOB#${teamId}#${hash}`, sk: 'BLOB' }),
  // Builds (lib/builds/, docs/builds.md)
  /** One chunk of a build's log lines (lib/builds/build-records.ts): line `seq * BUILD_LOG_CHUNK_LINES` onwards. */
  buildLogChunk: (deploymentId: string, seq: number) => ({ pk: `BUILDLOG#${deploymentId}`, sk: `CHUNK#${String(seq).padStart(6, '0')}` }),
  /** The newest build of a project's branch (or merge request): a newer one cancels the build it names. */
  branchBuild: (projectId: string, ref: string) => ({ pk: `PROJECT#${projectId}`, sk: `BRANCHBUILD#${ref}` }),
  /** A commit a webhook delivery queued for a branch or merge request of a project (kept 24 h): replays of it build nothing. */
  builtCommit: (projectId: string, ref: string, sha: string) => ({ pk: `PROJECT#${projectId}`, sk: `BUILTCOMMIT#${ref}#${sha}` }),
  builtCommitPrefix: (projectId: string, ref: string) => ({ pk: `PROJECT#${projectId}`, skPrefix: `BUILTCOMMIT#${ref}#` }),
  /** A team's running builds (deployment id -> expiry), for the per-team concurrency cap. */
  teamBuildSlots: (teamId: string) => ({ pk: `TEAM#${teamId}`, sk: 'BUILDSLOTS' }),
  /** A Git webhook delivery, recorded once by its id (lib/builds/delivery-records.ts); kept 30 days. */
  gitDelivery: (provider: string, deliveryId: string) => ({ pk: `GITDELIVERY#${provider}#${deliveryId}`, sk: 'GITDELIVERY' }),
  /** The projects connected to a repository: the project item's gsi2 keys, by normalised repository address. */
  projectByRepo: (repoKey: string, projectId: string) => ({ gsi2pk: `GITREPO#${repoKey}`, gsi2sk: projectId }),
  /** A preview_slug's platform-wide claim: holds `project_id`. */
  previewSlugHold: (slug: string) => ({ pk: `PREVIEWSLUG#${slug}`, sk: 'PREVIEWSLUG' }),
  /** What a preview host label of a project serves (a branch's or a merge request's latest ready preview). */
  preview: (projectId: string, label: string) => ({ pk: `PROJECT#${projectId}`, sk: `PREVIEW#${label}` }),
  // Functions (lib/functions/model.ts)
  /** One function of one deployment. */
  function: (projectId: string, deploymentId: string, name: string) => ({
    pk: `PROJECT#${projectId}`,
    sk: `FUNCTION#${deploymentId}#${name}`,
  }),
  functionPrefix: (projectId: string, deploymentId: string) => ({ pk: `PROJECT#${projectId}`, skPrefix: `FUNCTION#${deploymentId}#` }),
  /**
   * A function's schedule in a project (lib/functions/schedule-records.ts): the Scheduler schedule made for it, and
   * the state of its ticks. Not under `FUNCTION#`, which holds deployments' function records only.
   */
  functionSchedule: (projectId: string, name: string) => ({ pk: `PROJECT#${projectId}`, sk: `FNSCHEDULE#${name}` }),
  functionSchedulePrefix: (projectId: string) => ({ pk: `PROJECT#${projectId}`, skPrefix: 'FNSCHEDULE#' }),
  /**
   * A function hostname label `{name}-{subdomain}`, claimed by the first project
   * that builds it: names and subdomains both hold hyphens, so two projects could
   * otherwise produce one label. Holds `project_id` and `name`.
   */
  functionHostname: (label: string) => ({ pk: `FNHOST#${label}`, sk: 'FNHOST' }),
  /** The labels a project claims (lib/functions/hostname-claim-records.ts): released when its subdomain changes and when it is deleted. */
  functionHostOfProject: (projectId: string, label: string) => ({ gsi1pk: `PROJECTFNHOSTS#${projectId}`, gsi1sk: label }),
  /** Functions telemetry of one function in one clock hour (lib/functions/telemetry.ts); kept 9 days. */
  functionStatsHour: (teamId: string, hour: string, functionId: string) => ({ pk: `FNSTATS#${teamId}`, sk: `HOUR#${hour}#${functionId}` }),
  /** A team's functions usage in one week (Monday, UTC). */
  functionStatsWeek: (teamId: string, weekStart: string) => ({ pk: `FNSTATS#${teamId}`, sk: `WEEK#${weekStart}` }),
  /** A queued invocation (lib/functions/invocations.ts); expires by TTL after 7 days. */
  invocation: (invocationId: string) => ({ pk: `INVOCATION#${invocationId}`, sk: 'INVOCATION' }),
  /** A function's invocations, newest last (the members' listing). */
  invocationByFunction: (projectId: string, name: string, createdAt: string, invocationId: string) => ({
    gsi1pk: `FNINVOCATIONS#${projectId}#${name}`,
    gsi1sk: `${createdAt}#${invocationId}`,
  }),
  /**
   * Present only while an invocation is pending or running: what a restarted platform reclaims. Spread over
   * index partitions `OPENINVOCATIONS#{shard}` (lib/functions/invocations.ts OPEN_INVOCATION_SHARDS); records
   * written before the sharding sit in the one partition `OPENINVOCATIONS`.
   */
  openInvocation: (shard: number, createdAt: string, invocationId: string) => ({
    gsi2pk: `OPENINVOCATIONS#${shard}`,
    gsi2sk: `${createdAt}#${invocationId}`,
  }),
  openInvocationsUnsharded: () => ({ gsi2pk: 'OPENINVOCATIONS' }),
  /** A function's HTTPS requests in progress in the cloud (id -> expiry), for the cap of 30 (lib/functions/request-slot-records.ts). */
  functionRequestSlots: (functionId: string) => ({ pk: `FNSLOTS#${functionId}`, sk: 'FNSLOTS' }),
  /** One open live tail of a function (lib/functions/tail-session-records.ts): its channel, while someone watches. */
  functionTailSession: (functionId: string, sessionId: string) => ({ pk: `FNTAIL#${functionId}`, sk: `SESSION#${sessionId}` }),
  /** A team's queued invocations in flight (id -> expiry), for the cap of 10. */
  functionInflight: (teamId: string) => ({ pk: `TEAM#${teamId}`, sk: 'FNINFLIGHT' }),
  /** One slot of the queued door's pool of blank runner tasks in the cloud (lib/functions/warm-task-records.ts). */
  functionWarmSlot: (slot: number) => ({ pk: 'FNWARMPOOL', sk: `SLOT#${slot}` }),
  /** A project's site analytics of one UTC day (lib/sites/analytics.ts); kept 400 days. */
  analyticsDay: (projectId: string, day: string) => ({ pk: `ANALYTICS#${projectId}`, sk: `DAY#${day}` }),
  /** The requests of one path of a project's site on one UTC day; sorts after its day's row. */
  analyticsPath: (projectId: string, day: string, path: string) => ({ pk: `ANALYTICS#${projectId}`, sk: `DAY#${day}#PATH#${path}` }),
  /** A screenshot capture job of one publish (lib/screenshots/jobs.ts); expires by TTL after a day. */
  screenshotJob: (jobId: string) => ({ pk: `SCREENSHOTJOB#${jobId}`, sk: 'SCREENSHOTJOB' }),
  // Custom domains (lib/domains/)
  domain: (domainId: string) => ({ pk: `DOMAIN#${domainId}`, sk: 'DOMAIN' }),
  /** A project's domains, oldest first; a removed domain loses these keys, so listings skip it. */
  domainByProject: (projectId: string, createdAt: string, domainId: string) => ({
    gsi1pk: `PROJECTDOMAINS#${projectId}`,
    gsi1sk: `${createdAt}#${domainId}`,
  }),
  /** A hostname's claim, platform-wide: written with the domain in one transaction, so one project holds it. Holds `domain_id`, `project_id`. */
  domainHost: (hostname: string) => ({ pk: `DOMAINHOST#${hostname}`, sk: 'DOMAINHOST' }),
  /** The last integer handed out as a `cdn_dns_zone_id` (the spec's zone ids are integers; Route 53's are strings). */
  dnsZoneCounter: () => ({ pk: 'COUNTER#DNSZONE', sk: 'COUNTER' }),
  /** The atomic counter of the integer pull_zone_id of domains' distributions. */
  pullZoneCounter: () => ({ pk: 'COUNTER#PULLZONE', sk: 'COUNTER' }),
  // Trust and safety (lib/abuse/)
  /** An abuse report (spec endpoint 3); never expires by TTL: notices are kept as records of the intake. */
  abuseReport: (reportId: string) => ({ pk: `ABUSEREPORT#${reportId}`, sk: 'ABUSEREPORT' }),
  /** Every abuse report, newest last: the admin review queue reads this index partition. */
  abuseReportQueue: (createdAt: string, reportId: string) => ({ gsi1pk: 'ABUSEREPORTS', gsi1sk: `${createdAt}#${reportId}` }),
  /** One report naming one project (a report names several when its URLs do): counts reports per project by key. */
  abuseReportOfProject: (projectId: string, reportId: string) => ({ pk: `PROJECTREPORTS#${projectId}`, sk: `ABUSEREPORT#${reportId}` }),
  /** A keyword scan of one publish (lib/abuse/scans.ts): queued at finalize, finished by the abuse-scans worker. */
  abuseScan: (scanId: string) => ({ pk: `ABUSESCAN#${scanId}`, sk: 'ABUSESCAN' }),
  /** Which scan belongs to a deployment (`scan_id`): written once, with the scan. */
  abuseScanOfDeployment: (projectId: string, deploymentId: string) => ({
    pk: `PROJECTSCANS#${projectId}`,
    sk: `DEPLOYMENT#${deploymentId}`,
  }),
  /** The row of the latest finished scan of a project's branch: the only item the admin listing reads (gsi2 `ABUSESCANS#{review_status}`). */
  abuseScanLatest: (projectId: string, branch: string) => ({ pk: `PROJECTSCANS#${projectId}`, sk: `LATEST#${branch}` }),
  // Admin attention queues (lib/attention/, docs/attention.md)
  /**
   * A team's attention state: activation (deploy attempts, latest failure, last
   * successful deploy) and subscription. While the team has never published it
   * sits in the stuck-activation index (gsi1); its billing bucket, if any, is gsi2.
   */
  teamAttention: (teamId: string) => ({ pk: `TEAM#${teamId}`, sk: 'ATTENTION' }),
  stuckActivation: (createdAt: string, teamId: string) => ({ gsi1pk: 'STUCKACTIVATION', gsi1sk: `${createdAt}#${teamId}` }),
  /** Billing buckets: `CANCELLING`, `PAST_DUE`, `PENDING_PAYMENT` sorted by subscription start; `PAYING` by last successful deploy. */
  billingBucket: (bucket: string, sort: string, teamId: string) => ({ gsi2pk: `BILLING#${bucket}`, gsi2sk: `${sort}#${teamId}` }),
  /** Feedback by id alone (the team is in the feedback's key): holds `team_id`, for the admin's handled action. */
  /** A forge audience's platform-wide claim, by the SHA-256 of the audience (lib/git/forge-audiences.ts): holds `team_id`. */
  forgeAudience: (audienceId: string) => ({ pk: `FORGEAUDIENCE#${audienceId}`, sk: 'FORGEAUDIENCE' }),
  /** A team's registered forge audience, listed by the team (its purge releases the claim of each). */
  teamForgeAudience: (teamId: string, audienceId: string) => ({ pk: `TEAM#${teamId}`, sk: `FORGEAUDIENCE#${audienceId}` }),
  feedbackRef: (feedbackId: string) => ({ pk: `FEEDBACKREF#${feedbackId}`, sk: 'FEEDBACKREF' }),
  /** Unhandled feedback, oldest first: the inbox; a handled item loses these keys. */
  feedbackInbox: (createdAt: string, feedbackId: string) => ({ gsi2pk: 'FEEDBACKINBOX', gsi2sk: `${createdAt}#${feedbackId}` }),
  /** A webhook event that failed, one per provider event (a redelivery updates it). */
  failedWebhookEvent: (provider: string, providerEventId: string) => ({
    pk: `WEBHOOKFAILURE#${provider}#${providerEventId}`,
    sk: 'WEBHOOKFAILURE',
  }),
  failedWebhookQueue: (createdAt: string, id: string) => ({ gsi2pk: 'FAILEDWEBHOOKS', gsi2sk: `${createdAt}#${id}` }),
  /** A failed webhook event by its own id (the admin's retry and dismiss name the row by it). */
  failedWebhookById: (id: string) => ({ gsi1pk: `FAILEDWEBHOOK#${id}`, gsi1sk: 'FAILEDWEBHOOK' }),
  /** A webhook event that was applied, one per provider event: written with its change, so a redelivery applies nothing. */
  processedWebhookEvent: (provider: string, providerEventId: string) => ({
    pk: `WEBHOOKEVENT#${provider}#${providerEventId}`,
    sk: 'WEBHOOKEVENT',
  }),
  idempotency: (teamId: string, keyHash: string) => ({ pk: `IDEMPOTENCY#${teamId}#${keyHash}`, sk: 'IDEMPOTENCY' }),
};

export const epochSeconds = (date: Date) => Math.floor(date.getTime() / 1000);
