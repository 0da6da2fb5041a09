import {
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type Message,
} from '@aws-sdk/client-sqs';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { sqs } from '../aws/sqs.ts';
import { config } from '../config.ts';
import { deadLetterAlarmCount, queueAgeAlarmSeconds, runbookAnchors } from '../operations/signals.ts';
import { queueDefinitions, type QueueName } from '../resources.ts';
import { CliError } from './operator-env.ts';
import { tableLines } from './table.ts';
import { type PageKey, pageKey } from '../db/item.ts';

/**
 * `slipway admin status` and `admin redrive`: the signals the stack's alarms watch (infra/operations.ts), read from
 * the platform's queues and table through the SQS and DynamoDB APIs, with the same thresholds
 * (lib/operations/signals.ts). docs/operations.md says how to read them.
 */

export const queueNames = Object.keys(queueDefinitions) as QueueName[];

export interface QueueStatus {
  queue: QueueName;
  visible: number;
  in_flight: number;
  delayed: number;
  /** Age of the oldest waiting message, read by a peek (--peek); null when not read or none waits. */
  oldest_message_age_seconds: number | null;
  age_alarm_seconds: number;
  dead_letters: number;
  oldest_dead_letter_age_seconds: number | null;
}

export interface PlatformStatus {
  at: string;
  queues: QueueStatus[];
  /** Queued invocations created in the last hour, by status. */
  invocations_last_hour: Record<string, number>;
  /** Builds (deployments with a trigger) created in the last hour, by status. */
  builds_last_hour: Record<string, number>;
  /** What the stack's alarms would say now: one line per alarm in ALARM, with its runbook anchor. */
  alarming: { alarm: string; reason: string; runbook: string }[];
}

const number = (value: string | undefined) => Number(value ?? 0);

async function attributes(queueUrl: string) {
  const reply = await sqs().send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['All'] }));
  return reply.Attributes ?? {};
}

/** The dead-letter queue of a work queue, as its redrive policy names it. */
async function deadLetterQueueUrl(queueUrl: string): Promise<string> {
  const policy = (await attributes(queueUrl)).RedrivePolicy;
  if (!policy) throw new CliError(`${queueUrl} has no redrive policy (no dead-letter queue)`);
  const arn = String((JSON.parse(policy) as { deadLetterTargetArn: string }).deadLetterTargetArn);
  const reply = await sqs().send(new GetQueueUrlCommand({ QueueName: arn.slice(arn.lastIndexOf(':') + 1) }));
  return reply.QueueUrl!;
}

/**
 * The age of the oldest of up to 10 waiting messages, read without taking them (visibility 0). SQS counts the peek as
 * a receive: harmless on a dead-letter queue (it has no redrive policy; a redriven message is sent anew), but on a
 * work queue it spends one of a message's tries, so there it is only done when asked (--peek).
 */
async function oldestWaitingAgeSeconds(queueUrl: string, now: number): Promise<number | null> {
  const reply = await sqs().send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: 10,
      VisibilityTimeout: 0,
      WaitTimeSeconds: 0,
      MessageSystemAttributeNames: ['SentTimestamp'],
    }),
  );
  const sent = (reply.Messages ?? []).map((m) => Number(m.Attributes?.SentTimestamp)).filter(Number.isFinite);
  return sent.length ? Math.max(0, Math.floor((now - Math.min(...sent)) / 1000)) : null;
}

async function queueStatus(queue: QueueName, peek: boolean, now: number): Promise<QueueStatus> {
  const url = config.queueUrl(queue);
  const [work, dlqUrl] = await Promise.all([attributes(url), deadLetterQueueUrl(url)]);
  const dead = await attributes(dlqUrl);
  const deadLetters = number(dead.ApproximateNumberOfMessages);
  return {
    queue,
    visible: number(work.ApproximateNumberOfMessages),
    in_flight: number(work.ApproximateNumberOfMessagesNotVisible),
    delayed: number(work.ApproximateNumberOfMessagesDelayed),
    oldest_message_age_seconds: peek && number(work.ApproximateNumberOfMessages) > 0 ? await oldestWaitingAgeSeconds(url, now) : null,
    age_alarm_seconds: queueAgeAlarmSeconds[queue],
    dead_letters: deadLetters,
    oldest_dead_letter_age_seconds: deadLetters > 0 ? await oldestWaitingAgeSeconds(dlqUrl, now) : null,
  };
}

/**
 * Invocations and builds created since `since`, by status. A filtered scan: fine for an operator's look at the local
 * platform; on a deployment's table it reads the whole table (docs/operations.md says to use the dashboard there).
 */
async function recentWorkByStatus(since: string) {
  const invocations: Record<string, number> = {};
  const builds: Record<string, number> = {};
  let start: PageKey | undefined;
  do {
    const page = await dynamo().send(
      new ScanCommand({
        TableName: config.tableName(),
        FilterExpression:
          'created_at >= :since AND ((begins_with(pk, :invocation) AND sk = :invocationSk) OR (begins_with(sk, :deployment) AND attribute_exists(#trigger)))',
        ExpressionAttributeNames: { '#status': 'status', '#trigger': 'trigger' },
        ExpressionAttributeValues: {
          ':since': since,
          ':invocation': 'INVOCATION#',
          ':invocationSk': 'INVOCATION',
          ':deployment': 'DEPLOYMENT#',
        },
        ProjectionExpression: 'pk, #status',
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) {
      const tally = String(item.pk).startsWith('INVOCATION#') ? invocations : builds;
      tally[String(item.status)] = (tally[String(item.status)] ?? 0) + 1;
    }
    start = pageKey(page.LastEvaluatedKey);
  } while (start);
  return { invocations, builds };
}

/** The alarms of infra/operations.ts that the signals read here would set off. */
export function alarmingNow(queues: QueueStatus[]): PlatformStatus['alarming'] {
  const alarming: PlatformStatus['alarming'] = [];
  for (const q of queues) {
    if (q.dead_letters >= deadLetterAlarmCount) {
      alarming.push({
        alarm: `dead-letters-${q.queue}`,
        reason: `${q.dead_letters} message(s) in the ${q.queue} dead-letter queue`,
        runbook: `docs/operations.md#${runbookAnchors.deadLetters}`,
      });
    }
    if (q.oldest_message_age_seconds !== null && q.oldest_message_age_seconds > q.age_alarm_seconds) {
      alarming.push({
        alarm: `queue-age-${q.queue}`,
        reason: `the oldest waiting ${q.queue} message is ${q.oldest_message_age_seconds} s old (alarm above ${q.age_alarm_seconds} s)`,
        runbook: `docs/operations.md#${runbookAnchors.queueAge}`,
      });
    }
  }
  return alarming;
}

export async function platformStatus(options: { peek: boolean; now?: Date }): Promise<PlatformStatus> {
  const now = options.now ?? new Date();
  const queues = await Promise.all(queueNames.map((queue) => queueStatus(queue, options.peek, now.getTime())));
  const recent = await recentWorkByStatus(new Date(now.getTime() - 3_600_000).toISOString());
  return {
    at: now.toISOString(),
    queues,
    invocations_last_hour: recent.invocations,
    builds_last_hour: recent.builds,
    alarming: alarmingNow(queues),
  };
}

/** The status as an operator reads it in a terminal. */
export function formatStatus(status: PlatformStatus): string {
  const age = (seconds: number | null) => (seconds === null ? '-' : `${seconds}s`);
  const rows = [['queue', 'visible', 'in flight', 'delayed', 'oldest', 'alarm at', 'dead letters', 'oldest dead']];
  for (const q of status.queues) {
    rows.push([
      q.queue,
      String(q.visible),
      String(q.in_flight),
      String(q.delayed),
      age(q.oldest_message_age_seconds),
      `${q.age_alarm_seconds}s`,
      String(q.dead_letters),
      age(q.oldest_dead_letter_age_seconds),
    ]);
  }
  const table = tableLines(rows);
  const tally = (counts: Record<string, number>) =>
    Object.keys(counts).length
      ? Object.entries(counts)
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([status, count]) => `${status} ${count}`)
          .join(', ')
      : 'none';
  return [
    `Slipway status at ${status.at}`,
    '',
    ...table,
    '',
    `Invocations in the last hour: ${tally(status.invocations_last_hour)}`,
    `Builds in the last hour: ${tally(status.builds_last_hour)}`,
    '',
    status.alarming.length ? 'Alarming now:' : 'Alarming now: nothing',
    ...status.alarming.map((a) => `  ${a.alarm}: ${a.reason} (${a.runbook})`),
    '',
  ].join('\n');
}

export interface RedriveResult {
  queue: QueueName;
  moved: number;
  dead_letters_left: number;
}

/**
 * Moves the dead letters of a queue back to it, as SQS's redrive to source does (StartMessageMoveTask, which the
 * local endpoint lacks): each message is sent to the source first and deleted from the dead-letter queue only once
 * the send succeeded, so a failure leaves it where it was (at worst sent twice, which every worker tolerates: queues
 * deliver at least once). Stops when the dead-letter queue answers empty, or after the number it held at the start
 * (a message failing again comes back only after its tries, never into this run).
 */
export async function redriveDeadLetters(queue: QueueName): Promise<RedriveResult> {
  const source = config.queueUrl(queue);
  const dlq = await deadLetterQueueUrl(source);
  const held = number((await attributes(dlq)).ApproximateNumberOfMessages);
  let moved = 0;
  while (moved < held) {
    const reply = await sqs().send(
      new ReceiveMessageCommand({
        QueueUrl: dlq,
        MaxNumberOfMessages: Math.min(10, held - moved),
        // Hidden while being moved; one that fails to move shows again after this.
        VisibilityTimeout: 60,
        WaitTimeSeconds: 0,
        MessageAttributeNames: ['All'],
      }),
    );
    const messages: Message[] = reply.Messages ?? [];
    if (messages.length === 0) break;
    for (const message of messages) {
      await sqs().send(
        new SendMessageCommand({
          QueueUrl: source,
          MessageBody: message.Body ?? '',
          ...(message.MessageAttributes && Object.keys(message.MessageAttributes).length
            ? { MessageAttributes: message.MessageAttributes }
            : {}),
        }),
      );
      await sqs().send(new DeleteMessageCommand({ QueueUrl: dlq, ReceiptHandle: message.ReceiptHandle! }));
      moved += 1;
    }
  }
  return { queue, moved, dead_letters_left: number((await attributes(dlq)).ApproximateNumberOfMessages) };
}

/** A queue named on the command line, as lib/resources.ts names it. */
export function queueNamed(name: string | undefined): QueueName {
  if (!name) throw new CliError(`--queue is required: one of ${queueNames.join(', ')}`);
  if (!(queueNames as string[]).includes(name)) throw new CliError(`--queue ${name} is not a queue; one of ${queueNames.join(', ')}`);
  return name as QueueName;
}
