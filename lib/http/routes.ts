import { access } from '../access/rules.ts';
import { accountRoutes } from './routes/accounts.ts';
import { adminRoutes } from './routes/admin.ts';
import { buildRoutes } from './routes/builds.ts';
import { domainRoutes } from './routes/domains.ts';
import { functionRoutes } from './routes/functions.ts';
import type { ResourceUse, RouteRow } from './routes/route-row.ts';
import { siteRoutes } from './routes/sites.ts';
import { teamRoutes } from './routes/teams.ts';

export type { HttpMethod, ResourceUse, RouteRow } from './routes/route-row.ts';

/**
 * The one route table: the CDK stack makes one Lambda per row on the HTTP API
 * and the local API server dispatches to the same handler files. Adding an
 * endpoint is one row in its area's file under lib/http/routes/ plus one
 * handler file. The areas keep the order the rows always had: the first row
 * whose path and method match answers, and the OpenAPI document lists them so.
 *
 * No route handler imports this module (lib/http/pipeline.ts reads its own
 * bundled row instead), so no route's bundle holds these files; the fallback
 * ($default) imports it to tell 405 from 404.
 */
export const routes = [
  ...teamRoutes,
  ...adminRoutes,
  ...accountRoutes,
  ...siteRoutes,
  ...domainRoutes,
  ...functionRoutes,
  ...buildRoutes,
] as const satisfies readonly RouteRow[];

export type RouteKey = `${(typeof routes)[number]['method']} ${(typeof routes)[number]['path']}`;

/**
 * Answers every request no row matches (API Gateway's `$default` route), so
 * that unknown paths get the error envelope: 405 when the path exists under
 * another method, else 404.
 */
export const fallbackRoute = {
  handler: 'handlers/http/fallback.ts',
  access: access.public(),
  uses: [] as readonly ResourceUse[],
} as const;

export function routeKey(row: Pick<RouteRow, 'method' | 'path'>): string {
  return `${row.method} ${row.path}`;
}

export function findRoute(key: string): RouteRow {
  const row = (routes as readonly RouteRow[]).find((r) => routeKey(r) === key);
  if (!row) throw new Error(`No route row for ${key}`);
  return row;
}

const compiled = (routes as readonly RouteRow[]).map((row) => {
  const names: string[] = [];
  const pattern = row.path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    names.push(name);
    return '([^/]+)';
  });
  return { row, names, regex: new RegExp(`^${pattern}$`) };
});

/** Matches a concrete path against the table: the row and its path parameters, or why nothing matched. */
export function matchRoute(
  method: string,
  path: string,
): { row: RouteRow; params: Record<string, string> } | { row: null; pathExists: boolean } {
  let pathExists = false;
  for (const { row, names, regex } of compiled) {
    const match = regex.exec(path);
    if (!match) continue;
    pathExists = true;
    if (row.method !== method.toUpperCase()) continue;
    const params: Record<string, string> = {};
    names.forEach((name, i) => {
      params[name] = decodeURIComponent(match[i + 1]!);
    });
    return { row, params };
  }
  return { row: null, pathExists };
}

/** The methods the table serves on a concrete path (empty when the path is unknown). */
export function allowedMethods(path: string): string[] {
  return compiled.filter(({ regex }) => regex.test(path)).map(({ row }) => row.method);
}
