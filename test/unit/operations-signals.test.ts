import { describe, expect, it } from 'vitest';
import { alarmingNow, type QueueStatus } from '../../lib/cli/admin-status.ts';
import { queueAgeAlarmSeconds } from '../../lib/operations/signals.ts';
import { queueDefinitions, type QueueName } from '../../lib/resources.ts';

const queue = (name: QueueName, over: Partial<QueueStatus> = {}): QueueStatus => ({
  queue: name,
  visible: 0,
  in_flight: 0,
  delayed: 0,
  oldest_message_age_seconds: null,
  age_alarm_seconds: queueAgeAlarmSeconds[name],
  dead_letters: 0,
  oldest_dead_letter_age_seconds: null,
  ...over,
});

describe('what admin status calls alarming (the stack alarms on the same thresholds)', () => {
  it('is nothing for quiet queues and ages at the threshold', () => {
    expect(alarmingNow([queue('invocations'), queue('builds', { visible: 3, oldest_message_age_seconds: 1800 })])).toEqual([]);
  });

  it('names a dead letter from the first one and a waiting message past its queue threshold, with their runbook entries', () => {
    expect(
      alarmingNow([
        queue('invocations', { visible: 1, oldest_message_age_seconds: 601 }),
        queue('geoFilters', { dead_letters: 2, oldest_dead_letter_age_seconds: 40 }),
      ]),
    ).toEqual([
      {
        alarm: 'queue-age-invocations',
        reason: 'the oldest waiting invocations message is 601 s old (alarm above 600 s)',
        runbook: 'docs/operations.md#a-work-queue-holds-an-old-message',
      },
      {
        alarm: 'dead-letters-geoFilters',
        reason: '2 message(s) in the geoFilters dead-letter queue',
        runbook: 'docs/operations.md#a-dead-letter-queue-holds-messages',
      },
    ]);
  });

  it('fits every queue a threshold above one failed try (its visibility timeout)', () => {
    for (const name of Object.keys(queueDefinitions) as QueueName[]) {
      expect(queueAgeAlarmSeconds[name], name).toBeGreaterThan(queueDefinitions[name].visibilityTimeoutSeconds);
    }
  });
});
