import { OpenAPIRegistry, OpenApiGeneratorV31, extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as z from 'zod';
import { errorCatalogue } from './errors.ts';
import { handlerSchemas } from './pipeline.ts';
import { routeKey, routes, type RouteRow } from './routes.ts';

// The generator reads metadata through `.openapi()`, which this adds to zod's prototype.
extendZodWithOpenApi(z);

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
  const meta = z.object({ request_id: z.string(), timestamp: z.string(), trace_id: z.string() });
  const errorEnvelope = registry.register(
    'ErrorEnvelope',
    z.object({ code: z.enum(Object.keys(errorCatalogue) as [string, ...string[]]).or(z.string()), details: z.unknown(), error: z.string(), meta }),
  );
  for (const row of routes as readonly RouteRow[]) {
    const schemas = handlerSchemas.get(routeKey(row));
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
      description: who,
      security: row.access.kind === 'public' ? [] : [{ bearer: [] }],
      request: {
        ...(params.length ? { params: z.object(Object.fromEntries(params.map((p) => [p, z.string()]))) } : {}),
        ...(schemas?.query instanceof z.ZodObject ? { query: schemas.query } : {}),
        ...(schemas?.body ? { body: { content: { 'application/json': { schema: schemas.body } } } } : {}),
        ...(schemas?.rawBody ? { body: { content: { 'application/octet-stream': { schema: z.string() } } } } : {}),
      },
      responses: {
        200: { description: 'Success envelope: `data` and `meta`.' },
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

/** The error catalogue as a Markdown table. */
export function errorCatalogueMarkdown(): string {
  const rows = Object.entries(errorCatalogue)
    .sort(([, a], [, b]) => a.status - b.status)
    .map(([code, { status, message }]) => `| \`${code}\` | ${status} | ${message.replaceAll('|', '\\|')} |`);
  return [
    '# API error codes',
    '',
    'Generated from `lib/http/errors.ts` by `npm run docs`; do not edit by hand.',
    'Every error reply is the envelope `{code, details, error, meta}`; `error` is the sentence below unless the',
    'endpoint gives a more specific one. Codes the spec names are spelled as the spec spells them.',
    '',
    '| code | status | sentence |',
    '|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}
