import { randomBytes } from 'node:crypto';
import { batchGetAll } from '../db/batch.ts';
import { keys } from '../db/keys.ts';
import { ApiError } from '../errors/api-error.ts';
import { SUBDOMAIN_INVALID, SUBDOMAIN_RESERVED, SUBDOMAIN_TAKEN } from '../errors/catalogue/sites.ts';
import type { SubdomainHold } from './records.ts';

/**
 * A subdomain is one DNS label under the site domain: 3 to 63 lowercase
 * letters, digits and hyphens, a letter or digit at both ends. A double hyphen
 * is refused because `xx--` labels are IDNA (punycode) territory.
 */
const SUBDOMAIN_PATTERN = /^[a-z0-9](?:[a-z0-9-]{1,61})[a-z0-9]$/;

/**
 * Labels that would read as the platform's own addresses or shadow its
 * hostnames (previews.{site_domain}, fn.{site_domain}, ...). The one list.
 */
export const RESERVED_SUBDOMAINS: ReadonlySet<string> = new Set([
  'admin',
  'api',
  'app',
  'assets',
  'auth',
  'billing',
  'blog',
  'cdn',
  'dashboard',
  'docs',
  'fn',
  'ftp',
  'help',
  'imap',
  'localhost',
  'login',
  'mail',
  'mx',
  'ns1',
  'ns2',
  'pop',
  'previews',
  'root',
  'signup',
  'slipway',
  'smtp',
  'static',
  'status',
  'support',
  'www',
]);

export type SubdomainProblem = 'invalid' | 'reserved' | null;

export function subdomainProblem(subdomain: string): SubdomainProblem {
  if (!SUBDOMAIN_PATTERN.test(subdomain) || subdomain.includes('--')) return 'invalid';
  if (RESERVED_SUBDOMAINS.has(subdomain)) return 'reserved';
  return null;
}

/** A valid label derived from free text (a project name, or a refused subdomain). */
export function subdomainFrom(text: string): string {
  let base = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 50)
    .replace(/-+$/g, '');
  if (base.length < 3) base = base ? `site-${base}` : 'site';
  return base;
}

export function withSuffix(base: string, suffix: string): string {
  return `${base.slice(0, 62 - suffix.length).replace(/-+$/g, '')}-${suffix}`;
}

const randomSuffix = () => randomBytes(2).toString('hex');

/** Which of these labels no project holds (one batched read). */
export async function freeSubdomains(candidates: string[]): Promise<Set<string>> {
  const unique = [...new Set(candidates)].slice(0, 100);
  if (unique.length === 0) return new Set();
  const items = await batchGetAll<SubdomainHold>(unique.map((s) => keys.subdomainHold(s)));
  const held = new Set(items.map((item) => item.subdomain));
  return new Set(unique.filter((s) => !held.has(s)));
}

/**
 * Up to three free, valid, unreserved alternatives to a refused subdomain,
 * each checked against the holds at the time of the answer.
 */
export async function suggestSubdomains(refused: string, fallbackText?: string): Promise<string[]> {
  let base = subdomainFrom(refused);
  if (subdomainProblem(base) === 'invalid' && fallbackText) base = subdomainFrom(fallbackText);
  const candidates: string[] = [];
  if (subdomainProblem(base) === null && base !== refused) candidates.push(base);
  for (const word of ['site', 'app', 'web']) candidates.push(withSuffix(base, word));
  for (let i = 0; i < 4; i++) candidates.push(withSuffix(base, randomSuffix()));
  const valid = candidates.filter((c) => c !== refused && subdomainProblem(c) === null);
  const free = await freeSubdomains(valid);
  return valid.filter((c) => free.has(c)).slice(0, 3);
}

/**
 * The subdomain a request names (creating a project, or saving its settings), trimmed and lowercased;
 * SUBDOMAIN_INVALID or SUBDOMAIN_RESERVED, with suggestions from it or the project's name, when it cannot be one.
 */
export async function acceptableSubdomain(asked: string, name: string): Promise<string> {
  const subdomain = asked.trim().toLowerCase();
  const problem = subdomainProblem(subdomain);
  if (problem) {
    throw new ApiError(problem === 'invalid' ? SUBDOMAIN_INVALID : SUBDOMAIN_RESERVED, {
      details: { subdomain: asked, suggestions: await suggestSubdomains(subdomain, name) },
    });
  }
  return subdomain;
}

/** A new project's subdomain when its request names none: its name's, made valid. */
export function subdomainOfName(name: string): string {
  const subdomain = subdomainFrom(name);
  return subdomainProblem(subdomain) === null ? subdomain : withSuffix(subdomain, 'site');
}

/**
 * Another project holds `subdomain`: a requested one is refused (SUBDOMAIN_TAKEN, with suggestions);
 * a derived one is ours to pick, and this answers another.
 */
export async function anotherSubdomain(subdomain: string, requested: boolean, name: string): Promise<string> {
  if (requested) throw new ApiError(SUBDOMAIN_TAKEN, { details: { subdomain, suggestions: await suggestSubdomains(subdomain, name) } });
  return withSuffix(subdomainFrom(name), randomSuffix());
}
