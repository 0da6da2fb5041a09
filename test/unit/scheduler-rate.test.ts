import { describe, expect, it } from 'vitest';
import { cronDueAt, rateDueAt, withScheduledTime } from '../../lib/local/scheduler-driver.ts';

describe('the local scheduler driver: when a recurring rate() schedule fires', () => {
  it('one period after it last fired, in minutes, hours or days, singular or plural', () => {
    const since = Date.parse('2026-01-01T00:00:00Z');
    expect(rateDueAt('rate(1 hour)', since)).toBe(since + 3_600_000);
    expect(rateDueAt('rate(15 minutes)', since)).toBe(since + 900_000);
    expect(rateDueAt('rate(1 minute)', since)).toBe(since + 60_000);
    expect(rateDueAt('rate(2 days)', since)).toBe(since + 172_800_000);
  });

  it('is no rate schedule for one-time and cron expressions, or a malformed rate', () => {
    for (const expression of ['at(2026-01-01T00:00:00)', 'cron(0 * * * ? *)', 'rate(1 fortnight)', 'rate(hour)', undefined]) {
      expect(rateDueAt(expression, 0)).toBeNull();
    }
  });
});

describe('the local scheduler driver: when a scheduled function’s cron() schedule fires, and what it sends', () => {
  it('the first minute of the schedule after it last fired (or changed), UTC', () => {
    const soon = (iso: string) => Date.parse(iso) + 1000;
    expect(cronDueAt('cron(0,30 * * * ? *)', Date.parse('2026-01-01T00:10:05Z'), soon('2026-01-01T00:10:05Z'))).toBe(
      Date.parse('2026-01-01T00:30:00Z'),
    );
    expect(cronDueAt('cron(30 6 ? * MON-FRI *)', Date.parse('2026-11-27T06:30:00Z'), soon('2026-11-27T06:30:00Z'))).toBe(
      Date.parse('2026-11-30T06:30:00Z'),
    );
    // Minutes that passed while the platform was stopped: the latest only.
    const now = Date.parse('2026-01-01T05:10:30Z');
    expect(cronDueAt('cron(* * * * ? *)', Date.parse('2026-01-01T00:00:00Z'), now)).toBe(Date.parse('2026-01-01T05:10:00Z'));
    expect(cronDueAt('cron(0 * * * ? *)', Date.parse('2026-01-01T04:30:00Z'), now)).toBe(Date.parse('2026-01-01T05:00:00Z'));
    expect(cronDueAt('rate(1 hour)', 0)).toBeNull();
    expect(cronDueAt('cron(0 * * *)', 0)).toBeNull();
  });

  it('fills in the scheduled time, to the second, where the input asks for it', () => {
    expect(withScheduledTime('{"t":"<aws.scheduler.scheduled-time>"}', Date.parse('2026-01-01T00:30:00Z'))).toBe(
      '{"t":"2026-01-01T00:30:00Z"}',
    );
  });
});
