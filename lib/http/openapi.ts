import { OpenAPIRegistry, OpenApiGeneratorV31, extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as z from 'zod';
import { errorCatalogue } from '../errors/all.ts';
import { handlerSchemas } from './pipeline.ts';
import { responseSchemas } from './responses.ts';
import { routeKey, routes, type RouteKey, type RouteRow } from './routes.ts';

// The generator reads metadata through `.openapi()`, which this adds to zod's prototype.
extendZodWithOpenApi(z);

/**
 * The handlers declare their schemas with zod/mini, whose schemas lack the
 * `.meta()` the generator calls on every schema it visits (classic zod has
 * it). Docs time only: gives each mini schema in the tree that method,
 * reading the same global registry classic zod's `.meta()` reads.
 */
function withMeta(schema: unknown, seen = new Set<unknown>()): void {
  if (!schema || typeof schema !== 'object' || seen.has(schema)) return;
  seen.add(schema);
  if ('_zod' in schema) {
    const s = schema as Record<string, unknown> & { _zod: { def: Record<string, unknown>; bag: Record<string, unknown> } };
    const def = s._zod.def;
    // What classic zod's schemas carry and the generator reads: meta(), unwrap(), and the
    // format and length bounds classic zod folds from the checks (a format schema is its own first check).
    if (typeof s.meta !== 'function') s.meta = () => z.globalRegistry.get(s as never);
    if (typeof s.unwrap !== 'function' && 'innerType' in def) s.unwrap = () => def.innerType;
    if ((def.type === 'string' || def.type === 'number') && !('format' in s)) {
      const checks = [
        ...((s._zod as { traits?: Set<string> }).traits?.has('$ZodCheck') ? [s] : []),
        ...((def.checks as (typeof s)[]) ?? []),
      ];
      let format: unknown = null;
      let minLength: number | null = null;
      let maxLength: number | null = null;
      for (const check of checks) {
        const c = check._zod.def as { check?: string; format?: string; minimum?: number; maximum?: number };
        if ((c.check === 'string_format' || c.check === 'number_format') && format === null) format = c.format;
        if (c.check === 'min_length') minLength = Math.max(minLength ?? -Infinity, c.minimum!);
        if (c.check === 'max_length') maxLength = Math.min(maxLength ?? Infinity, c.maximum!);
      }
      Object.assign(s, def.type === 'string' ? { format, minLength, maxLength } : { format });
    }
    for (const value of Object.values(def)) {
      if (Array.isArray(value)) for (const v of value) withMeta(v, seen);
      else if (value && typeof value === 'object' && !('_zod' in value) && def.type === 'object') {
        for (const field of Object.values(value)) withMeta(field, seen);
      } else withMeta(value, seen);
    }
  }
}

/**
 * The OpenAPI document, built from the route table and the zod schemas the
 * handlers declare (importing a handler registers its schemas), so the
 * reference cannot drift from what the code validates.
 */
export async function buildOpenApiDocument(repoRoot: string) {
  for (const row of routes as readonly RouteRow[]) {
    await import(pathToFileURL(join(repoRoot, row.handler)).href);
  }
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer' });
  const meta = z.object({ request_id: z.string(), timestamp: z.string(), trace_id: z.string() }).meta({ id: 'ResponseMeta' });
  const errorEnvelope = registry.register(
    'ErrorEnvelope',
    z.object({
      code: z.enum(Object.keys(errorCatalogue).sort() as [string, ...string[]]).or(z.string()),
      details: z.unknown(),
      error: z.string(),
      meta,
    }),
  );
  for (const row of routes as readonly RouteRow[]) {
    const schemas = handlerSchemas.get(routeKey(row));
    const reply = responseSchemas[routeKey(row) as RouteKey];
    withMeta(schemas?.body);
    withMeta(schemas?.query);
    const who =
      row.access.kind === 'public'
        ? 'No authentication.'
        : row.access.kind === 'platformAdmin'
          ? 'Platform administrators.'
          : row.access.kind === 'signedIn'
            ? `Any signed-in caller${row.access.sessionOnly ? ' (sessions only, API keys refused)' : ''}.`
            : `Role ${row.access.minRole} or higher in the ${row.access.team === 'current' ? 'current team' : "resource's team"}${row.access.sessionOnly ? ' (sessions only)' : ''}.`;
    const params = [...row.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
    registry.registerPath({
      method: row.method.toLowerCase() as 'get',
      path: row.path,
      description: row.docs?.note ? `${who} ${row.docs.note}` : who,
      security: row.access.kind === 'public' ? [] : [{ bearer: [] }],
      request: {
        ...(row.docs?.requiredHeaders
          ? {
              headers: z.object(
                Object.fromEntries(Object.entries(row.docs.requiredHeaders).map(([name, meaning]) => [name, z.string().describe(meaning)])),
              ),
            }
          : {}),
        ...(params.length
          ? { params: z.object(Object.fromEntries(params.map((p) => [p, schemas?.uuidParams.includes(p) ? z.uuid() : z.string()]))) }
          : {}),
        ...(schemas?.query?._zod.def.type === 'object' ? { query: schemas.query as z.ZodObject } : {}),
        ...(schemas?.body ? { body: { content: { 'application/json': { schema: schemas.body as z.ZodType } } } } : {}),
        ...(schemas?.rawBody ? { body: { content: { [schemas.rawBody]: { schema: z.string() } } } } : {}),
      },
      responses: {
        [reply?.status ?? 200]: {
          description: 'Success envelope: `data` and `meta`.',
          ...(reply ? { content: { 'application/json': { schema: z.object({ data: reply.data, meta }) } } } : {}),
        },
        default: { description: 'Error envelope.', content: { 'application/json': { schema: errorEnvelope } } },
      },
    });
  }
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: { title: 'Slipway platform API', version: 'v1' },
    servers: [{ url: '/' }],
  });
}

const GENERATED_HEADER = `/**
 * Generated from docs/openapi.json by openapi-typescript, through \`npm run docs\` (lib/http/write-docs.ts).
 * Do not edit: change the schemas (lib/http/responses.ts, the handlers' zod schemas) and run \`npm run docs\`.
 * test/unit/openapi.test.ts fails when this file is not current.
 */

`;

/**
 * The console's API types (dashboard/src/api-types.ts): the document's paths
 * and schemas as TypeScript, each named schema also as a type of its own
 * (`Project`, `Domain` ...), so the pages never write an API shape by hand.
 */
export async function consoleApiTypes(doc: object): Promise<string> {
  // A devDependency, loaded here only: nothing that runs the platform imports this module.
  const { default: openapiTS, astToString } = await import('openapi-typescript');
  const ast = await openapiTS(JSON.parse(JSON.stringify(doc)), { rootTypes: true, rootTypesNoSchemaPrefix: true, silent: true });
  return GENERATED_HEADER + astToString(ast);
}

/** The error catalogue as a Markdown table. */
export function errorCatalogueMarkdown(): string {
  const rows = Object.entries(errorCatalogue)
    // By status, then code: a module namespace's key order differs between Node and the test runner.
    .sort(([codeA, a], [codeB, b]) => a.status - b.status || codeA.localeCompare(codeB))
    .map(([code, { status, message }]) => `| \`${code}\` | ${status} | ${message.replaceAll('|', '\\|')} |`);
  return [
    '# API error codes',
    '',
    'Generated from `lib/errors/catalogue.ts` by `npm run docs`; do not edit by hand.',
    'Every error reply is the envelope `{code, details, error, meta}`; `error` is the sentence below unless the',
    'endpoint gives a more specific one. Codes the spec names are spelled as the spec spells them.',
    '',
    '| code | status | sentence |',
    '|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}
