import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument, consoleApiTypes, errorCatalogueMarkdown } from './openapi.ts';

/** `npm run docs`: writes docs/openapi.json, docs/api-errors.md and the console's API types. */
const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const doc = await buildOpenApiDocument(repoRoot);
writeFileSync(join(repoRoot, 'docs', 'openapi.json'), `${JSON.stringify(doc, null, 2)}\n`);
writeFileSync(join(repoRoot, 'docs', 'api-errors.md'), errorCatalogueMarkdown());
writeFileSync(join(repoRoot, 'dashboard', 'src', 'api-types.ts'), await consoleApiTypes(doc));
process.stdout.write('wrote docs/openapi.json, docs/api-errors.md and dashboard/src/api-types.ts\n');
