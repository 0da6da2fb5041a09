import { describe, expect, it } from 'vitest';
import { rateDueAt } from '../../lib/local/scheduler-driver.ts';

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
