import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../lib/local/api-server.ts';
import { buildOpenApiDocument, consoleApiTypes, errorCatalogueMarkdown } from '../../lib/http/openapi.ts';
import { routes } from '../../lib/http/routes.ts';

describe('the API reference', () => {
  it('documents every route of the table with its body schema', async () => {
    const doc = await buildOpenApiDocument(repoRoot);
    for (const row of routes) {
      expect(doc.paths?.[row.path]?.[row.method.toLowerCase() as 'get'], `${row.method} ${row.path}`).toBeDefined();
    }
    const patch = doc.paths?.['/api/v1/team/profile']?.patch as any;
    expect(Object.keys(patch.requestBody.content['application/json'].schema.properties).sort()).toEqual(['name', 'slug']);
  });

  it("docs/openapi.json and the console's generated API types are current (run `npm run docs` after changing a schema)", async () => {
    const doc = await buildOpenApiDocument(repoRoot);
    expect(readFileSync(join(repoRoot, 'docs', 'openapi.json'), 'utf8')).toBe(`${JSON.stringify(doc, null, 2)}\n`);
    const types = readFileSync(join(repoRoot, 'dashboard', 'src', 'api-types.ts'), 'utf8');
    expect(types.startsWith('/**\n * Generated from docs/openapi.json by openapi-typescript')).toBe(true);
    expect(types).toBe(await consoleApiTypes(doc));
  });

  it('docs/api-errors.md is the current error catalogue (run `npm run docs` after changing it)', () => {
    expect(readFileSync(join(repoRoot, 'docs', 'api-errors.md'), 'utf8')).toBe(errorCatalogueMarkdown());
  });
});
