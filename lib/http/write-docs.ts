import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument, errorCatalogueMarkdown } from './openapi.ts';

/** `npm run docs`: writes docs/openapi.json and docs/api-errors.md. */
const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const doc = await buildOpenApiDocument(repoRoot);
writeFileSync(join(repoRoot, 'docs', 'openapi.json'), `${JSON.stringify(doc, null, 2)}\n`);
writeFileSync(join(repoRoot, 'docs', 'api-errors.md'), errorCatalogueMarkdown());
process.stdout.write('wrote docs/openapi.json and docs/api-errors.md\n');
