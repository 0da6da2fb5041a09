import type { QueueName } from '../resources.ts';

/**
 * The operator's signals, shared by the stack's alarms (infra/operations.ts) and `slipway admin status` (the same
 * thresholds locally): one place, so what the local platform calls alarming is what would page in the cloud.
 */

/** Where each kind of alarm is explained, as the heading anchors of docs/operations.md. */
export const runbookAnchors = {
  deadLetters: 'a-dead-letter-queue-holds-messages',
  queueAge: 'a-work-queue-holds-an-old-message',
  lambdaErrors: 'platform-lambdas-fail',
  lambdaThrottles: 'platform-lambdas-are-throttled',
  table: 'the-table-throttles-or-fails',
  api5xx: 'the-api-answers-5xx',
  door: 'the-container-door-is-short-of-healthy-tasks',
} as const;

export type RunbookEntry = keyof typeof runbookAnchors;

/** The runbook reference an alarm's description ends with. */
export const runbookLink = (entry: RunbookEntry) => `Runbook: docs/operations.md#${runbookAnchors[entry]}`;

/**
 * How old the oldest message of each work queue may be before it alarms (ApproximateAgeOfOldestMessage counts
 * messages being worked on too). Each is above what a healthy queue reaches: one failed attempt (the visibility
 * timeout of lib/resources.ts) plus a second run, or the waits the queue is made for (SSL retries are sent with
 * delays up to 15 minutes, geo filters retry each minute for half an hour, builds wait for a slot).
 */
export const queueAgeAlarmSeconds: Record<QueueName, number> = {
  // A caller waits for a queued invocation: a 240 s visibility timeout and a second 180 s run, then it is late.
  invocations: 600,
  // A prepare retried once (180 s + 150 s); after that the first request makes the Lambda anyway.
  functionLambdas: 600,
  // A removal may run 15 minutes and be retried after 16.
  deletions: 3600,
  screenshots: 900,
  abuseScans: 900,
  // Retries are delayed up to 900 s by design (lib/domains/tls.ts).
  sslRetries: 1800,
  // Retried each minute for about 30 minutes by design (lib/resources.ts).
  geoFilters: 2700,
  // A build may wait minutes for its team's slot; it is requeued with a delay, but a followed build stays in flight.
  builds: 1800,
  // Completion callbacks: the last retry is delayed 600 s by design (lib/functions/callbacks.ts), and a 10 s attempt.
  callbacks: 1200,
};

/** Dead letters alarm from the first one: each is work the platform gave up on. */
export const deadLetterAlarmCount = 1;
