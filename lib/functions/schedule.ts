/**
 * Schedules of functions (issue 36 item 1, its pure part): a function file may export
 * `config = { schedule: '<cron>' }`, a five-field cron expression in UTC (minute hour day-of-month month
 * day-of-week) or one of `@hourly`, `@daily`, `@weekly`, `@monthly`, `@yearly` (`@annually`). The expression
 * is read from the file's text without running it (readScheduleConfig), parsed (parseSchedule) and the next tick
 * after a time computed (nextRun). The finest schedule is once a minute, which five fields cannot go below.
 *
 * Fields: `*`, a number, a range `a-b`, a step `*\/n` or `a-b/n` or `a/n` (from a to the field's end), lists of
 * those with commas; months also `jan`..`dec`, days of week `sun`..`sat` (0 and 7 are Sunday). As in cron, when
 * neither day field starts with `*` a day matching either runs; otherwise a day must match both.
 */

export interface CronSchedule {
  expression: string;
  minutes: ReadonlySet<number>;
  hours: ReadonlySet<number>;
  daysOfMonth: ReadonlySet<number>;
  months: ReadonlySet<number>;
  /** 0 (Sunday) to 6. */
  daysOfWeek: ReadonlySet<number>;
  /**
   * The day-of-month (day-of-week) field starts with `*`. As in cron, a day must then match both day fields; when
   * neither does, a day matching either runs.
   */
  anyDayOfMonth: boolean;
  anyDayOfWeek: boolean;
}

export type ScheduleParse = { ok: true; schedule: CronSchedule } | { ok: false; error: string };

const MACROS: Record<string, string> = {
  '@hourly': '0 * * * *',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@weekly': '0 0 * * 0',
  '@monthly': '0 0 1 * *',
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
};

const MONTH_NAMES = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

interface FieldRule {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
  /** The first name's number (jan is 1, sun is 0). */
  namesFrom?: number;
}

const FIELDS: readonly FieldRule[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTH_NAMES, namesFrom: 1 },
  // 7 is Sunday too, folded to 0 below.
  { name: 'day of week', min: 0, max: 7, names: DAY_NAMES, namesFrom: 0 },
];

function fieldValue(text: string, rule: FieldRule): number | null {
  if (/^\d{1,2}$/.test(text)) return Number(text);
  const index = rule.names?.indexOf(text.toLowerCase()) ?? -1;
  return index >= 0 ? index + (rule.namesFrom ?? 0) : null;
}

function parseField(text: string, rule: FieldRule): { values: Set<number>; any: boolean } | string {
  const values = new Set<number>();
  const any = text.startsWith('*');
  for (const part of text.split(',')) {
    const match = /^([^/]+)(?:\/(\d{1,2}))?$/.exec(part);
    if (!match) return `the ${rule.name} field "${text}" is not a cron field`;
    const [, range, stepText] = match;
    const step = stepText === undefined ? 1 : Number(stepText);
    if (step < 1) return `the ${rule.name} field "${text}" has a step of 0`;
    let from: number;
    let to: number;
    if (range === '*') {
      [from, to] = [rule.min, rule.max === 7 ? 6 : rule.max];
    } else {
      const bounds = range!.split('-');
      if (bounds.length > 2) return `the ${rule.name} field "${text}" is not a cron field`;
      const low = fieldValue(bounds[0]!, rule);
      const high = bounds.length === 2 ? fieldValue(bounds[1]!, rule) : stepText === undefined ? low : rule.max;
      if (low === null || high === null) return `the ${rule.name} field "${text}" is not a cron field`;
      if (low < rule.min || high > rule.max || low > high)
        return `the ${rule.name} field "${text}" is outside ${rule.min}-${rule.max === 7 ? 6 : rule.max}`;
      [from, to] = [low, high];
    }
    for (let v = from; v <= to; v += step) values.add(rule.max === 7 && v === 7 ? 0 : v);
  }
  return { values, any };
}

export function parseSchedule(expression: string): ScheduleParse {
  const trimmed = expression.trim();
  const expanded = trimmed.startsWith('@') ? MACROS[trimmed.toLowerCase()] : trimmed;
  if (expanded === undefined) return { ok: false, error: `"${trimmed}" is not one of @hourly, @daily, @weekly, @monthly, @yearly` };
  const parts = expanded.split(/\s+/);
  if (parts.length !== 5 || parts[0] === '')
    return {
      ok: false,
      error: `"${trimmed}" has ${parts[0] === '' ? 0 : parts.length} fields; a cron expression has 5 (minute hour day month weekday)`,
    };
  const parsed = [];
  for (const [i, part] of parts.entries()) {
    const field = parseField(part, FIELDS[i]!);
    if (typeof field === 'string') return { ok: false, error: field };
    parsed.push(field);
  }
  const [minutes, hours, daysOfMonth, months, daysOfWeek] = parsed as [
    { values: Set<number>; any: boolean },
    { values: Set<number>; any: boolean },
    { values: Set<number>; any: boolean },
    { values: Set<number>; any: boolean },
    { values: Set<number>; any: boolean },
  ];
  const schedule: CronSchedule = {
    expression: trimmed,
    minutes: minutes.values,
    hours: hours.values,
    daysOfMonth: daysOfMonth.values,
    months: months.values,
    daysOfWeek: daysOfWeek.values,
    anyDayOfMonth: daysOfMonth.any,
    anyDayOfWeek: daysOfWeek.any,
  };
  // A day of month that no allowed month has (30 February) would never run.
  const bothDaysNeeded = schedule.anyDayOfMonth || schedule.anyDayOfWeek;
  if (bothDaysNeeded && ![...schedule.months].some((m) => [...schedule.daysOfMonth].some((d) => d <= daysInMonth(2024, m))))
    return { ok: false, error: `"${trimmed}" names a day that none of its months has` };
  return { ok: true, schedule };
}

const daysInMonth = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();

function dayMatches(s: CronSchedule, date: Date): boolean {
  const dom = s.daysOfMonth.has(date.getUTCDate());
  const dow = s.daysOfWeek.has(date.getUTCDay());
  return s.anyDayOfMonth || s.anyDayOfWeek ? dom && dow : dom || dow;
}

/** The first tick strictly after `after` (whole minutes, UTC). Searches at most 8 years ahead (29 February on a Monday). */
export function nextRun(s: CronSchedule, after: Date): Date {
  const t = new Date(after.getTime());
  t.setUTCSeconds(0, 0);
  t.setUTCMinutes(t.getUTCMinutes() + 1);
  const limit = after.getTime() + 8 * 366 * 86_400_000;
  while (t.getTime() <= limit) {
    if (!s.months.has(t.getUTCMonth() + 1)) {
      t.setUTCMonth(t.getUTCMonth() + 1, 1);
      t.setUTCHours(0, 0);
      continue;
    }
    if (!dayMatches(s, t)) {
      t.setUTCDate(t.getUTCDate() + 1);
      t.setUTCHours(0, 0);
      continue;
    }
    if (!s.hours.has(t.getUTCHours())) {
      t.setUTCHours(t.getUTCHours() + 1, 0);
      continue;
    }
    if (!s.minutes.has(t.getUTCMinutes())) {
      t.setUTCMinutes(t.getUTCMinutes() + 1);
      continue;
    }
    return t;
  }
  throw new Error(`"${s.expression}" has no run within 8 years`);
}

/** Whether the minute of `at` (UTC) is a tick of the schedule. */
export function isTick(s: CronSchedule, at: Date): boolean {
  return s.minutes.has(at.getUTCMinutes()) && s.hours.has(at.getUTCHours()) && s.months.has(at.getUTCMonth() + 1) && dayMatches(s, at);
}

/** EventBridge Scheduler refuses a schedule expression longer than this. */
const SCHEDULER_EXPRESSION_MAX = 256;

/** A field's values in EventBridge's syntax: `*` when every value is allowed, else ranges joined by commas. */
function fieldText(values: ReadonlySet<number>, min: number, max: number, names?: readonly string[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === max - min + 1) return '*';
  const label = (v: number) => (names ? names[v]! : String(v));
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(j > i ? `${label(sorted[i]!)}-${label(sorted[j]!)}` : label(sorted[i]!));
    i = j + 1;
  }
  return parts.join(',');
}

const EVENTBRIDGE_DAYS = DAY_NAMES.map((d) => d.toUpperCase());

/**
 * The schedule as EventBridge Scheduler's `cron(minutes hours day-of-month month day-of-week year)`. Scheduler
 * wants exactly one day field to be `?`, so a schedule restricting both days (cron's "both" or "either" rule)
 * becomes one that fires on a superset of its days and `exact` is false: the tick's receiver keeps only the
 * ticks `isTick` accepts. Null when the expression would pass Scheduler's 256 characters.
 */
export function schedulerCron(s: CronSchedule): { expression: string; exact: boolean } | null {
  const minutes = fieldText(s.minutes, 0, 59);
  const hours = fieldText(s.hours, 0, 23);
  const months = fieldText(s.months, 1, 12);
  const dom = fieldText(s.daysOfMonth, 1, 31);
  const dow = fieldText(s.daysOfWeek, 0, 6, EVENTBRIDGE_DAYS);
  let days: string;
  let exact = true;
  if (dom === '*' && dow === '*') days = '* ?';
  else if (s.anyDayOfMonth || s.anyDayOfWeek) {
    // A day must match both fields.
    if (dow === '*') days = `${dom} ?`;
    else if (dom === '*') days = `? ${dow}`;
    else [days, exact] = [`${dom} ?`, false];
  } else if (dom === '*' || dow === '*') days = '* ?';
  else [days, exact] = ['* ?', false];
  const expression = `cron(${minutes} ${hours} ${days.split(' ')[0]} ${months} ${days.split(' ')[1]} *)`;
  return expression.length > SCHEDULER_EXPRESSION_MAX ? null : { expression, exact };
}

/**
 * The five-field expression of a `cron(...)` that schedulerCron wrote (`?` read as `*`, the year dropped), for the
 * local scheduler driver, which fires what Scheduler would; null for any other expression.
 */
export function fiveFieldsOfSchedulerCron(expression: string | undefined): string | null {
  const match = /^cron\((.+)\)$/.exec(expression ?? '');
  if (!match) return null;
  const fields = match[1]!.trim().split(/\s+/);
  if (fields.length !== 6) return null;
  return fields
    .slice(0, 5)
    .map((field) => (field === '?' ? '*' : field))
    .join(' ');
}
