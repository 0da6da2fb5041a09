import { createReadStream, existsSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import { config } from '../config.ts';
import { consoleContentSecurityPolicy } from '../http/console-headers.ts';
import { answerApiRequest, repoRoot, type ApiAnswer, type HostnameHandler } from './api-server.ts';
import type { MailOutbox } from './mail-outbox.ts';
import { signInLinkOf } from './mail-outbox.ts';

/**
 * The console on the local platform: `http://app.localhost:PORT` serves the
 * built dashboard (dashboard/dist) and answers `/api/*` with the API of the
 * same process, so the console and the API share one origin, as behind the
 * stack's CloudFront distribution. `/_local/outbox` lists the mail the
 * platform sent (sign-in links among it), since nothing is delivered locally.
 */
export const CONSOLE_HOST_LABEL = 'app';

export function dashboardDist(): string {
  return join(repoRoot, 'dashboard', 'dist');
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

function isConsoleHost(host: string | undefined): boolean {
  const name = (host ?? '').replace(/:\d+$/, '').toLowerCase();
  return name === `${CONSOLE_HOST_LABEL}.localhost`;
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function outboxPage(outbox: MailOutbox): string {
  const rows = outbox
    .mails()
    .map((mail) => {
      const link = signInLinkOf(mail);
      return (
        `<li><h2>${escapeHtml(mail.subject)}</h2><p>To ${escapeHtml(mail.to.join(', '))} at ${escapeHtml(mail.at)}</p>` +
        (link ? `<p><a href="${escapeHtml(link)}">Sign in as ${escapeHtml(mail.to[0] ?? '')}</a></p>` : '') +
        `<pre>${escapeHtml(mail.text)}</pre></li>`
      );
    })
    .join('');
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Local outbox</title></head><body><main>' +
    '<h1>Local outbox</h1><p>Mail the local platform sent, newest first. Nothing is delivered from here.</p>' +
    `<ul>${rows || '<li>No mail yet.</li>'}</ul></main></body></html>`
  );
}

/** A file of the built console, or its index.html for the app's own paths (no extension). */
function fileFor(path: string): string | null {
  const dist = dashboardDist();
  const clean = normalize(decodeURIComponent(path.split('?')[0]!)).replace(/^([/\\])+/, '');
  const file = join(dist, clean);
  if (!file.startsWith(dist + sep) && file !== dist) return null;
  if (existsSync(file) && statSync(file).isFile()) return file;
  return extname(clean) ? null : join(dist, 'index.html');
}

/**
 * The console's security headers (lib/http/console-headers.ts): its policy names the local AWS endpoint,
 * where presigned upload and screenshot URLs point here.
 */
function securityHeaders(): Record<string, string> {
  const endpoint = config.awsEndpoint();
  const storage = endpoint ? [new URL(endpoint).origin] : [];
  return {
    'content-security-policy': consoleContentSecurityPolicy(storage),
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'strict-origin-when-cross-origin',
  };
}

/** `api` answers the console's /api/* as the platform's API does (the template's routes in the synthesized mode). */
export function dashboardHostnameHandler(outbox: MailOutbox, api?: () => ApiAnswer): HostnameHandler {
  return (req, res) => (isConsoleHost(req.headers.host) ? answerConsole(req, res, outbox, api) : false);
}

async function answerConsole(req: IncomingMessage, res: ServerResponse, outbox: MailOutbox, api?: () => ApiAnswer): Promise<true> {
  const path = req.url ?? '/';
  // The console's origin carries the API too (CloudFront's /api/* behaviour in the cloud), and the forge
  // tokens' JWKS (the tokens' `iss` is this origin).
  if (path.startsWith('/api/') || path.split('?')[0] === '/.well-known/jwks.json') {
    await answerApiRequest(req, res, api?.());
    return true;
  }
  if (path === '/_local/outbox') {
    res.writeHead(200, { ...securityHeaders(), 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(outboxPage(outbox));
    return true;
  }
  const file = fileFor(path);
  if (!file || !existsSync(file)) {
    const built = existsSync(join(dashboardDist(), 'index.html'));
    res.writeHead(built ? 404 : 503, { ...securityHeaders(), 'content-type': 'text/plain; charset=utf-8' });
    res.end(built ? 'Not found.\n' : 'The console is not built yet: run npm run build:dashboard (npm run dev does it).\n');
    return true;
  }
  // Bundles are named by their content hash and never change; index.html always is asked for again.
  const immutable = /\/assets\//.test(file);
  res.writeHead(200, {
    ...securityHeaders(),
    'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
    'cache-control': immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
  });
  createReadStream(file).pipe(res);
  return true;
}
