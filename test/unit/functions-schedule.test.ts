import { describe, expect, it } from 'vitest';
import { functionSchedule } from '../../lib/functions/build.ts';
import { fiveFieldsOfSchedulerCron, isTick, nextRun, parseSchedule, schedulerCron } from '../../lib/functions/schedule.ts';
import { readScheduleConfig } from '../../lib/functions/schedule-config.ts';

/** Schedules of functions, the pure part: cron parsing, the next run in UTC, and reading the schedule from a file's text. */

const next = (expression: string, after: string) => {
  const parsed = parseSchedule(expression);
  if (!parsed.ok) throw new Error(parsed.error);
  return nextRun(parsed.schedule, new Date(after)).toISOString();
};

describe('next run of a cron expression, UTC', () => {
  it.each([
    ['*/15 * * * *', '2026-11-27T10:07:30.500Z', '2026-11-27T10:15:00.000Z'],
    ['*/15 * * * *', '2026-11-27T10:15:00.000Z', '2026-11-27T10:30:00.000Z'],
    ['* * * * *', '2026-11-27T10:15:59.999Z', '2026-11-27T10:16:00.000Z'],
    ['@hourly', '2026-11-27T10:00:00.000Z', '2026-11-27T11:00:00.000Z'],
    ['@daily', '2026-12-31T23:59:00.000Z', '2027-01-01T00:00:00.000Z'],
    // 2026-11-27 is a Friday: the next Sunday midnight.
    ['@weekly', '2026-11-27T08:00:00.000Z', '2026-11-29T00:00:00.000Z'],
    ['@monthly', '2026-01-31T12:00:00.000Z', '2026-02-01T00:00:00.000Z'],
    ['@yearly', '2026-06-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z'],
    ['@ANNUALLY', '2026-06-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z'],
    ['0 12 29 2 *', '2026-03-01T00:00:00.000Z', '2028-02-29T12:00:00.000Z'],
    ['30 9 * * mon-fri', '2026-11-27T09:30:00.000Z', '2026-11-30T09:30:00.000Z'],
    // Both day fields restricted: the 13th or a Friday, whichever comes first.
    ['0 0 13 * 5', '2026-11-27T00:00:00.000Z', '2026-12-04T00:00:00.000Z'],
    ['0 0 13 * FRI', '2026-12-05T00:00:00.000Z', '2026-12-11T00:00:00.000Z'],
    // A day field starting with * : both must match (every odd day of the month that is a Monday).
    ['0 0 */2 * 1', '2026-11-27T00:00:00.000Z', '2026-12-07T00:00:00.000Z'],
    // */7 of the day of week is 0 and 7, both Sunday: the first Sunday of a month.
    ['0 0 1-7 * */7', '2026-11-27T00:00:00.000Z', '2026-12-06T00:00:00.000Z'],
    ['0 0 * * 7', '2026-11-27T00:00:00.000Z', '2026-11-29T00:00:00.000Z'],
    ['5 4 * jan,jul sun', '2026-11-27T00:00:00.000Z', '2027-01-03T04:05:00.000Z'],
    ['0 */6 * * *', '2026-11-27T06:00:00.000Z', '2026-11-27T12:00:00.000Z'],
    ['10-20/5 * * * *', '2026-11-27T06:16:00.000Z', '2026-11-27T06:20:00.000Z'],
    ['10-20/5 * * * *', '2026-11-27T06:20:00.000Z', '2026-11-27T07:10:00.000Z'],
    ['5/20 * * * *', '2026-11-27T06:25:00.000Z', '2026-11-27T06:45:00.000Z'],
    ['0 0 31 * *', '2026-11-27T00:00:00.000Z', '2026-12-31T00:00:00.000Z'],
    ['  0   0 * * *  ', '2026-11-27T00:00:00.000Z', '2026-11-28T00:00:00.000Z'],
  ])('%s after %s is %s', (expression, after, expected) => {
    expect(next(expression, after)).toBe(expected);
  });
});

describe('invalid schedules, with the reason', () => {
  it.each([
    ['', '"" has 0 fields; a cron expression has 5 (minute hour day month weekday)'],
    ['* * * *', '"* * * *" has 4 fields; a cron expression has 5 (minute hour day month weekday)'],
    ['* * * * * *', '"* * * * * *" has 6 fields; a cron expression has 5 (minute hour day month weekday)'],
    ['60 * * * *', 'the minute field "60" is outside 0-59'],
    ['* 24 * * *', 'the hour field "24" is outside 0-23'],
    ['* * 0 * *', 'the day of month field "0" is outside 1-31'],
    ['* * * 13 *', 'the month field "13" is outside 1-12'],
    ['* * * * 8', 'the day of week field "8" is outside 0-6'],
    ['*/0 * * * *', 'the minute field "*/0" has a step of 0'],
    ['5-1 * * * *', 'the minute field "5-1" is outside 0-59'],
    ['a * * * *', 'the minute field "a" is not a cron field'],
    ['1-2-3 * * * *', 'the minute field "1-2-3" is not a cron field'],
    ['* * * foo *', 'the month field "foo" is not a cron field'],
    ['@every 5m', '"@every 5m" is not one of @hourly, @daily, @weekly, @monthly, @yearly'],
    ['0 0 30 2 *', '"0 0 30 2 *" names a day that none of its months has'],
  ])('%j: %s', (expression, error) => {
    expect(parseSchedule(expression)).toEqual({ ok: false, error });
  });
});

describe('the schedule read from a function file without running it', () => {
  it.each([
    [`export default () => new Response('x');\nexport const config = { schedule: '@daily' };`, '@daily'],
    [
      `import type { Config } from '@netlify/functions';\nexport default async () => {};\nexport const config: Config = {\n  schedule: "*/15 * * * *",\n};`,
      '*/15 * * * *',
    ],
    ['export const config = { schedule: `0 3 * * *` } satisfies Config;', '0 3 * * *'],
    [`export const config = { "schedule": '@monthly' } as const;`, '@monthly'],
    [
      `export const config = { path: /a\\/b}/g, fn: () => ({ schedule: 'not this' }), list: [1, { schedule: 'nor this' }], schedule: '@weekly' };`,
      '@weekly',
    ],
    // Only the exported config counts: comments, strings and other objects do not.
    [
      `// export const config = { schedule: '@hourly' };\nconst s = "export const config = { schedule: '@hourly' }";\nconst config2 = { schedule: '@hourly' };`,
      null,
    ],
    ['export const config = { path: "/x", method: ["GET"] };', null],
    ['export default () => new Response("no config");', null],
    ['function f() { const config = { schedule: "@daily" }; }\nexport const config = { schedule: "@yearly" };', '@yearly'],
  ])('%s', (source, schedule) => {
    expect(readScheduleConfig(source)).toEqual({ ok: true, schedule });
  });

  it.each([
    ['const S = "@daily";\nexport const config = { schedule: S };', 'config.schedule must be a string literal'],
    ['export const config = { schedule: "@daily" + "" };', 'config.schedule must be a string literal'],
    // A template literal with a substitution (written here without one of the test's own).
    ['const hour = 3;\nexport const config = { schedule: `0 $' + '{hour} * * *` };', 'config.schedule must be a string literal'],
    ['const schedule = "@daily";\nexport const config = { schedule };', 'config.schedule must be a string literal'],
    ['export const config = makeConfig();', 'the exported config is not an object literal'],
    [
      'const base = {};\nexport const config = { ...base, schedule: "@daily" };',
      'the exported config spreads another object; write its schedule out',
    ],
    ['export const config = { schedule: "@daily };', 'the file could not be read: an unclosed string'],
  ])('%s: %s', (source, error) => {
    expect(readScheduleConfig(source)).toEqual({ ok: false, error });
  });
});

const parsedOf = (expression: string) => {
  const parsed = parseSchedule(expression);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.schedule;
};

describe("EventBridge Scheduler's cron() of a schedule", () => {
  it.each([
    ['* * * * *', 'cron(* * * * ? *)', true],
    ['*/15 * * * *', 'cron(0,15,30,45 * * * ? *)', true],
    ['@yearly', 'cron(0 0 1 1 ? *)', true],
    ['@weekly', 'cron(0 0 ? * SUN *)', true],
    ['30 6 * * 1-5', 'cron(30 6 ? * MON-FRI *)', true],
    ['0 9 1,15 * *', 'cron(0 9 1,15 * ? *)', true],
    ['0 0 * jan,jul 7', 'cron(0 0 ? 1,7 SUN *)', true],
    // cron's "either day" rule: every day, and the receiver keeps the ticks isTick accepts.
    ['0 12 1 * 1', 'cron(0 12 * * ? *)', false],
    // cron's "both days" rule with both restricted: the days of the month, filtered the same way.
    ['0 12 */10 * 1', 'cron(0 12 1,11,21,31 * ? *)', false],
  ])('%s is %s (exact: %s)', (expression, cron, exact) => {
    expect(schedulerCron(parsedOf(expression))).toEqual({ expression: cron, exact });
    // What the local driver reads back fires at the same minutes.
    const back = parseSchedule(fiveFieldsOfSchedulerCron(cron)!);
    expect(back.ok).toBe(true);
  });

  it('a tick is a minute of the schedule, the day rule included', () => {
    const either = parsedOf('0 12 1 * 1');
    expect(isTick(either, new Date('2026-06-01T12:00:00Z'))).toBe(true); // the 1st (a Monday too)
    expect(isTick(either, new Date('2026-06-08T12:00:00Z'))).toBe(true); // a Monday
    expect(isTick(either, new Date('2026-06-09T12:00:00Z'))).toBe(false);
    expect(isTick(either, new Date('2026-06-08T12:01:00Z'))).toBe(false);
    const both = parsedOf('0 12 */10 * 1');
    expect(isTick(both, new Date('2026-06-01T12:00:00Z'))).toBe(true);
    expect(isTick(both, new Date('2026-06-11T12:00:00Z'))).toBe(false); // a Thursday
  });
});

describe('the schedule a function file declares, as the build reads it', () => {
  it('the expression, none, or the build-log line naming the function and the expression', () => {
    expect(functionSchedule('job', "export const config = { schedule: ' @daily ' };")).toEqual({ schedule: '@daily' });
    expect(functionSchedule('job', 'export default () => new Response()')).toEqual({ schedule: null });
    expect(functionSchedule('job', "export const config = { schedule: '* * *' };")).toEqual({
      line: '[functions] Build failed: job has an invalid schedule "* * *": "* * *" has 3 fields; a cron expression has 5 (minute hour day month weekday)',
    });
    expect(functionSchedule('job', 'export const config = { schedule: `${x}` };')).toEqual({
      line: '[functions] Build failed: job has a schedule that cannot be read: config.schedule must be a string literal',
    });
  });
});
