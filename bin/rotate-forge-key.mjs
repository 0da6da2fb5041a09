#!/usr/bin/env node
// Rotates the forge tokens' signing key (docs/builds.md, "Forge tokens"): reads the secret's current value
// (FORGE_SIGNING_KEY: a seed, or a JSON key set) on stdin and writes the next value on stdout: the keys still
// published, and a new key that starts signing `--lead-minutes` from now (default 15). Put it back into the
// secret; the old key stays in the JWKS until its last token has expired. Run with the repository's tsx:
//   ... | npx tsx bin/rotate-forge-key.mjs [--lead-minutes 15] | ...
import { parseArgs } from 'node:util';
import { rotateForgeKeySet } from '../lib/git/forge-keys.ts';

const { values } = parseArgs({ options: { 'lead-minutes': { type: 'string', default: '15' } } });
const lead = Number(values['lead-minutes']);
if (!Number.isFinite(lead) || lead < 5) {
  process.stderr.write('--lead-minutes must be 5 or more: forges cache the JWKS for five minutes.\n');
  process.exit(2);
}
let current = '';
for await (const chunk of process.stdin) current += chunk;
process.stdout.write(`${rotateForgeKeySet(current, new Date(), Math.round(lead * 60))}\n`);
