/**
 * The console's security headers (docs/dashboard.md, "Security headers"), one source for the local console
 * (lib/local/dashboard-host.ts) and the stack's CloudFront response headers policy (infra/console.ts).
 *
 * The console is one HTML page that loads one module script and one stylesheet from its own origin
 * (`/assets/`, dashboard/build.mjs), with no inline script, no inline style element and no eval, and talks
 * to the API on the same origin. The only other origin it reaches is object storage: a large file's upload
 * goes to a presigned PUT URL and a project's screenshot is a presigned GET URL, so `connect-src` and
 * `img-src` name the storage origins. Nothing may frame it (`frame-ancestors 'none'`, with
 * `X-Frame-Options: DENY` for browsers that predate CSP 2).
 */
export function consoleContentSecurityPolicy(storageOrigins: readonly string[]): string {
  const storage = storageOrigins.length > 0 ? ` ${storageOrigins.join(' ')}` : '';
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self' data:${storage}`,
    `connect-src 'self'${storage}`,
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Where the stack's presigned URLs point: S3's virtual-hosted and path-style hosts of any region. */
export const CLOUD_STORAGE_ORIGINS = ['https://*.amazonaws.com'] as const;
