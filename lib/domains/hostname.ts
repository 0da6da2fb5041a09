import { domainToASCII } from 'node:url';
import { parse } from 'tldts';
import { config } from '../config.ts';

export type HostnameProblem = 'invalid' | 'reserved';

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * A custom domain as typed by a person, in the form DNS and the table use:
 * lower-case ASCII (an internationalised name becomes its punycode form), no
 * trailing dot. Whether it is the apex of its zone comes from the public
 * suffix list (through tldts): `example.co.uk` is an apex, `www.example.com`
 * is not, which no pattern on dots can tell.
 */
export function parseCustomHostname(input: string): { hostname: string; isApex: boolean } | { problem: HostnameProblem } {
  const ascii = domainToASCII(input.trim().replace(/\.$/, ''));
  if (!ascii || ascii.length > 253) return { problem: 'invalid' };
  const labels = ascii.split('.');
  if (labels.length < 2 || !labels.every((label) => LABEL.test(label))) return { problem: 'invalid' };
  const parsed = parse(ascii);
  // Only ICANN suffixes: a name without a registrable domain (`co.uk`, `localhost`) or under an unknown suffix cannot be verified.
  if (parsed.isIp || !parsed.domain || !parsed.isIcann) return { problem: 'invalid' };
  const own = [config.siteDomain(), config.functionDomain()];
  if (own.some((d) => ascii === d || ascii.endsWith(`.${d}`))) return { problem: 'reserved' };
  return { hostname: ascii, isApex: parsed.domain === ascii };
}
