import { randomBytes } from 'node:crypto';

/** Team slugs: 3 to 48 lowercase letters, digits and hyphens, alphanumeric at both ends. */
export const TEAM_SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{1,46})[a-z0-9]$/;

/** Slugs that would read as part of the product or shadow its paths. */
export const RESERVED_TEAM_SLUGS = new Set([
  'admin',
  'api',
  'app',
  'dashboard',
  'docs',
  'help',
  'login',
  'logout',
  'me',
  'new',
  'settings',
  'signup',
  'slipway',
  'status',
  'support',
  'team',
  'teams',
  'www',
]);

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isValidTeamSlug(slug: string): boolean {
  return TEAM_SLUG_PATTERN.test(slug) && !slug.includes('--') && !UUID_PATTERN.test(slug);
}

/** A slug derived from a team name; never empty, never a UUID, never reserved. */
export function slugFromName(name: string): string {
  let base = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/g, '');
  // An identity-provider organization UUID makes a poor slug: start from "team".
  if (UUID_PATTERN.test(name.trim()) || base.length < 3 || RESERVED_TEAM_SLUGS.has(base)) base = 'team';
  return base;
}

export function withRandomSuffix(base: string): string {
  return `${base.slice(0, 40)}-${randomBytes(3).toString('hex')}`;
}
