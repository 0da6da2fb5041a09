import { domainToASCII } from 'node:url';
import { parse } from 'tldts-icann';
import { edgeLength, edgeStart, labelText, rulesRoot } from 'tldts-icann/dist/es6/src/data/trie.js';
import { config } from '../config.ts';

export type HostnameProblem = 'invalid' | 'reserved';

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * The top-level labels of the list's ICANN section, read from tldts-icann's
 * own trie (the root's edges; a node's edges are edgeStart[n]..edgeStart[n+1],
 * and each edge's label follows the previous ones in labelText). The ICANN
 * build answers an unknown suffix exactly as a known one (the default `*`
 * rule, and no isIcann), so this is how an unknown one is told apart; the
 * full tldts tells it too but carries the private section as well, 43 KB more
 * of the add-domain bundle (docs/deploy.md, "Handler bundles"). The version
 * is pinned in package.json because this reads the package's data layout;
 * test/unit/domain-hostname.test.ts fails loudly should that layout move.
 */
const icannTopLevel: ReadonlySet<string> = (() => {
  const found = new Set<string>();
  let offset = 0;
  for (let edge = 0; edge < edgeStart[rulesRoot + 1]!; edge++) {
    if (edge >= edgeStart[rulesRoot]!) found.add(labelText.slice(offset, offset + edgeLength[edge]!));
    offset += edgeLength[edge]!;
  }
  return found;
})();

/**
 * A custom domain as typed by a person, in the form DNS and the table use:
 * lower-case ASCII (an internationalised name becomes its punycode form), no
 * trailing dot. Whether it is the apex of its zone comes from the public
 * suffix list's ICANN section (through tldts-icann): `example.co.uk` is an
 * apex, `www.example.com` is not, which no pattern on dots can tell.
 */
export function parseCustomHostname(input: string): { hostname: string; isApex: boolean } | { problem: HostnameProblem } {
  const ascii = domainToASCII(input.trim().replace(/\.$/, ''));
  if (!ascii || ascii.length > 253) return { problem: 'invalid' };
  const labels = ascii.split('.');
  if (labels.length < 2 || !labels.every((label) => LABEL.test(label))) return { problem: 'invalid' };
  // Only ICANN suffixes: a name under an unknown suffix (`localhost`, `example.invalidtld`) or without a registrable domain (`co.uk`) cannot be verified.
  if (!icannTopLevel.has(labels.at(-1)!)) return { problem: 'invalid' };
  const parsed = parse(ascii);
  if (parsed.isIp || !parsed.domain) return { problem: 'invalid' };
  const own = [config.siteDomain(), config.functionDomain()];
  if (own.some((d) => ascii === d || ascii.endsWith(`.${d}`))) return { problem: 'reserved' };
  return { hostname: ascii, isApex: parsed.domain === ascii };
}
