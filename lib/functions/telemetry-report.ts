import { config } from '../config.ts';
import { keys } from '../db/keys.ts';
import { queryAll } from '../db/query.ts';
import { ApiError } from '../errors/api-error.ts';
import { SERVICE_UNAVAILABLE } from '../errors/catalogue/request.ts';
import { getUser } from '../users/user-records.ts';
import { getTeamOwner } from '../teams/membership-records.ts';
import { getTeamItem } from '../teams/records.ts';
import { FUNCTION_MEMORY_MB } from './model.ts';
import { listFunctionRecords } from './records.ts';
import type { HourRowItem, WeekRowItem } from './telemetry-records.ts';
import type { ProjectItem } from '../projects/records.ts';
import { LIMIT_KINDS, hourOf, weekStartOf, type LimitKind } from './telemetry.ts';

/**
 * Spec endpoint 13, "Admin functions telemetry": one team's figures, read
 * from the rows lib/functions/telemetry.ts writes (`FNSTATS#{team}`:
 * `HOUR#{hour}#{function_id}` kept 9 days, `WEEK#{monday}` kept 10 weeks),
 * every read a query or get by key. Windows are clock hours: the 7-day figures
 * sum the current hour and the 167 before it, the 24-hour figures the current
 * hour and the 23 before it.
 */

export interface LimitHitRow {
  count_7d: number;
  count_24h: number;
  function_id: string;
  function_name: string;
  kind: LimitKind;
  last_hit_at: string | null;
  owner_email: string;
  project_name: string;
  team_id: string;
}

export interface ColdStartRow {
  boot_ms_p50_7d: number;
  boot_ms_p99_7d: number;
  function_id: string;
  function_name: string;
  owner_email: string;
  pod_starts_7d: number;
  pod_starts_24h: number;
  project_name: string;
  team_id: string;
  wake_share_24h: number;
  wakes_7d: number;
  wakes_24h: number;
}

export interface WeeklyUsageRow {
  background_invocations: number;
  background_runtime_seconds: number;
  http_requests: number;
  week_start: string;
}

export interface FunctionCostRow {
  function_id: string;
  function_name: string;
  gib_seconds_7d: number;
  memory_request_mib: number;
  peak_memory_mib: number;
  pod_seconds_7d: number;
  project_name: string;
}

export interface FunctionsTelemetry {
  generated_at: string;
  limits_hit: { cockpit_available: boolean; cockpit_reason: string; rows: LimitHitRow[] };
  cold_starts: ColdStartRow[];
  weekly_usage: WeeklyUsageRow[];
  cost: {
    background_runtime_seconds_7d: number;
    http_gib_seconds_7d: number;
    http_pod_seconds_7d: number;
    functions: FunctionCostRow[];
  };
}

/**
 * The kinds only the HTTPS door sees. The door is the "cockpit" that counts
 * them, and it forwards requests only for teams enrolled in the functions
 * beta: for any other team a zero would claim no request hit a limit that no
 * request could reach, so these kinds are left out instead.
 */
export const COCKPIT_KINDS: readonly LimitKind[] = ['body_413', 'http_timeout'];
export const COCKPIT_NOT_ENROLLED =
  'The team is not enrolled in the functions beta, so the HTTPS door serves none of its functions and counts no body_413 or http_timeout.';

const HOURS_7D = 7 * 24;
const HOURS_24H = 24;
const WEEKS = 8;

const num = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
const round = (value: number, places: number) => Math.round(value * 10 ** places) / 10 ** places;

/** Nearest-rank percentile of integer samples; 0 without samples. */
function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

const minusHours = (date: Date, hours: number) => new Date(date.getTime() - hours * 3_600_000);

/** A database failure the caller may retry (throttling, a 5xx, the endpoint unreachable) is 503; any other stays a 500. */
function asDatabaseFailure(error: unknown): unknown {
  if (error instanceof ApiError) return error;
  const e = error as { name?: string; $retryable?: unknown; $metadata?: { httpStatusCode?: number } };
  const status = e?.$metadata?.httpStatusCode;
  const retryable =
    e?.$retryable !== undefined ||
    (status !== undefined && status >= 500) ||
    [
      'ProvisionedThroughputExceededException',
      'ThrottlingException',
      'RequestLimitExceeded',
      'InternalServerError',
      'ServiceUnavailable',
    ].includes(e?.name ?? '') ||
    // No HTTP reply at all: the table's endpoint could not be reached.
    (status === undefined &&
      ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'TimeoutError'].some((code) =>
        String((error as Error)?.message ?? e?.name).includes(code),
      ));
  return retryable ? new ApiError(SERVICE_UNAVAILABLE) : error;
}

interface FunctionAggregate {
  function_id: string;
  function_name: string;
  project_id: string;
  requests24h: number;
  wakes7d: number;
  wakes24h: number;
  podStarts7d: number;
  podStarts24h: number;
  bootMs: number[];
  instanceSeconds: number;
  peakMemoryMib: number;
  limits: Map<LimitKind, { count7d: number; count24h: number; lastAt: string | null }>;
}

async function ownerEmail(teamId: string): Promise<string> {
  const owner = await getTeamOwner(teamId);
  const user = owner ? await getUser(owner.user_id) : null;
  return user?.email ?? '';
}

/** The team's projects (its index partition) and the functions of each active project's live deployment. */
async function teamProjectsAndLiveFunctions(teamId: string) {
  const projects = await queryAll<ProjectItem>({
    TableName: config.tableName(),
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.projectByTeam(teamId, '', '').gsi1pk },
  });
  const live = await Promise.all(
    projects.flatMap((p) => (p.status === 'active' && p.live_deployment_id ? [listFunctionRecords(p.id, p.live_deployment_id)] : [])),
  );
  return { projectNames: new Map(projects.map((p) => [p.id, p.name])), liveFunctions: live.flat() };
}

/** GET /api/v1/admin/teams/{id}/functions. A team without functions (or without rows) gets empty arrays and zeros. */
export async function readFunctionsTelemetry(teamId: string, now = new Date()): Promise<FunctionsTelemetry> {
  try {
    return await buildTelemetry(teamId, now);
  } catch (error) {
    throw asDatabaseFailure(error);
  }
}

/** Every function that answers now and every one that left hour rows in the window, with its sums; and the background seconds. */
function aggregateRows(
  liveFunctions: { function_id: string; name: string; project_id: string }[],
  hourRows: HourRowItem[],
  first24h: string,
): { functions: Map<string, FunctionAggregate>; backgroundSeconds: number } {
  const functions = new Map<string, FunctionAggregate>();
  const aggregate = (functionId: string, name: string, projectId: string) => {
    let fn = functions.get(functionId);
    if (!fn) {
      fn = {
        function_id: functionId,
        function_name: name,
        project_id: projectId,
        requests24h: 0,
        wakes7d: 0,
        wakes24h: 0,
        podStarts7d: 0,
        podStarts24h: 0,
        bootMs: [],
        instanceSeconds: 0,
        peakMemoryMib: 0,
        limits: new Map(),
      };
      functions.set(functionId, fn);
    }
    return fn;
  };
  for (const record of liveFunctions) aggregate(record.function_id, record.name, record.project_id);

  let backgroundSeconds = 0;
  for (const row of hourRows) {
    const hour = row.hour;
    const fn = aggregate(row.function_id, row.function_name, row.project_id);
    const in24h = hour >= first24h;
    fn.wakes7d += num(row.wakes);
    fn.podStarts7d += num(row.pod_starts);
    fn.instanceSeconds += num(row.instance_seconds);
    fn.peakMemoryMib = Math.max(fn.peakMemoryMib, num(row.peak_memory_mib));
    if (Array.isArray(row.boot_ms)) fn.bootMs.push(...row.boot_ms.map(num));
    if (in24h) {
      fn.requests24h += num(row.http_requests);
      fn.wakes24h += num(row.wakes);
      fn.podStarts24h += num(row.pod_starts);
    }
    backgroundSeconds += num(row.background_runtime_seconds);
    for (const kind of LIMIT_KINDS) {
      const count = num(row[`limit_${kind}`]);
      if (count === 0) continue;
      const entry = fn.limits.get(kind) ?? { count7d: 0, count24h: 0, lastAt: null };
      entry.count7d += count;
      if (in24h) entry.count24h += count;
      const lastAt = row[`limit_${kind}_last_at`];
      if (typeof lastAt === 'string' && (entry.lastAt === null || lastAt > entry.lastAt)) entry.lastAt = lastAt;
      fn.limits.set(kind, entry);
    }
  }

  return { functions, backgroundSeconds };
}

/** The limit-hit rows: the cockpit's kinds for every function (when the team has the cockpit), the others once hit. */
function limitHitRows(
  ordered: FunctionAggregate[],
  {
    cockpitAvailable,
    owner,
    projectName,
    teamId,
  }: { cockpitAvailable: boolean; owner: string; projectName: (id: string) => string; teamId: string },
): LimitHitRow[] {
  const rows: LimitHitRow[] = [];
  for (const fn of ordered) {
    for (const kind of LIMIT_KINDS) {
      const cockpitKind = COCKPIT_KINDS.includes(kind);
      if (cockpitKind && !cockpitAvailable) continue;
      const entry = fn.limits.get(kind);
      // The cockpit's kinds are listed for every function, zero included; the other kinds only once hit.
      if (!entry && !cockpitKind) continue;
      rows.push({
        count_7d: entry?.count7d ?? 0,
        count_24h: entry?.count24h ?? 0,
        function_id: fn.function_id,
        function_name: fn.function_name,
        kind,
        last_hit_at: entry?.lastAt ?? null,
        owner_email: owner,
        project_name: projectName(fn.project_id),
        team_id: teamId,
      });
    }
  }

  return rows;
}

async function buildTelemetry(teamId: string, now: Date): Promise<FunctionsTelemetry> {
  const partition = keys.functionStatsWeek(teamId, '').pk;
  const currentHour = hourOf(now);
  const first7d = hourOf(minusHours(now, HOURS_7D - 1));
  const first24h = hourOf(minusHours(now, HOURS_24H - 1));
  const currentWeek = weekStartOf(now);
  const firstWeek = weekStartOf(new Date(Date.parse(currentWeek) - (WEEKS - 1) * 7 * 86_400_000));

  const [hourRows, weekRows, team, owner, { projectNames, liveFunctions }] = await Promise.all([
    queryAll<HourRowItem>({
      TableName: config.tableName(),
      // `$` sorts right after `#`: the bound takes in every function's row of the current hour.
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: { ':pk': partition, ':from': `HOUR#${first7d}`, ':to': `HOUR#${currentHour}$` },
    }),
    queryAll<WeekRowItem>({
      TableName: config.tableName(),
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: { ':pk': partition, ':from': `WEEK#${firstWeek}`, ':to': `WEEK#${currentWeek}` },
      ScanIndexForward: false,
    }),
    getTeamItem(teamId),
    ownerEmail(teamId),
    teamProjectsAndLiveFunctions(teamId),
  ]);

  const cockpitAvailable = typeof team?.functions_enrolled_at === 'string' && team.functions_enrolled_at !== '';

  const { functions, backgroundSeconds } = aggregateRows(liveFunctions, hourRows, first24h);

  const projectName = (projectId: string) => projectNames.get(projectId) ?? '';
  const ordered = [...functions.values()].sort(
    (a, b) => projectName(a.project_id).localeCompare(projectName(b.project_id)) || a.function_name.localeCompare(b.function_name),
  );

  const rows = limitHitRows(ordered, { cockpitAvailable, owner, projectName, teamId });

  const coldStarts: ColdStartRow[] = ordered.map((fn) => {
    const boots = [...fn.bootMs].sort((a, b) => a - b);
    return {
      boot_ms_p50_7d: Math.round(percentile(boots, 50)),
      boot_ms_p99_7d: Math.round(percentile(boots, 99)),
      function_id: fn.function_id,
      function_name: fn.function_name,
      owner_email: owner,
      pod_starts_7d: fn.podStarts7d,
      pod_starts_24h: fn.podStarts24h,
      project_name: projectName(fn.project_id),
      team_id: teamId,
      wake_share_24h: fn.requests24h > 0 ? round(fn.wakes24h / fn.requests24h, 4) : 0,
      wakes_7d: fn.wakes7d,
      wakes_24h: fn.wakes24h,
    };
  });

  const costFunctions: FunctionCostRow[] = ordered.map((fn) => ({
    function_id: fn.function_id,
    function_name: fn.function_name,
    // Billed like memory reserved, not used: each instance holds its full 512 MB while it lives.
    gib_seconds_7d: round((fn.instanceSeconds * FUNCTION_MEMORY_MB) / 1024, 3),
    memory_request_mib: FUNCTION_MEMORY_MB,
    peak_memory_mib: fn.peakMemoryMib,
    pod_seconds_7d: Math.round(fn.instanceSeconds),
    project_name: projectName(fn.project_id),
  }));
  const instanceSeconds = ordered.reduce((sum, fn) => sum + fn.instanceSeconds, 0);

  return {
    generated_at: now.toISOString(),
    limits_hit: { cockpit_available: cockpitAvailable, cockpit_reason: cockpitAvailable ? '' : COCKPIT_NOT_ENROLLED, rows },
    cold_starts: coldStarts,
    weekly_usage: weekRows.map((row) => ({
      background_invocations: num(row.background_invocations),
      background_runtime_seconds: Math.round(num(row.background_runtime_seconds)),
      http_requests: num(row.http_requests),
      week_start: row.week_start,
    })),
    cost: {
      background_runtime_seconds_7d: Math.round(backgroundSeconds),
      http_gib_seconds_7d: round((instanceSeconds * FUNCTION_MEMORY_MB) / 1024, 3),
      http_pod_seconds_7d: Math.round(instanceSeconds),
      functions: costFunctions,
    },
  };
}
