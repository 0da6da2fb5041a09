import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { HostnameHandler } from './api-server.ts';
import { logger } from '../logger.ts';
import { customDomainHost, siteSubdomain } from '../sites/hostname.ts';
import { compressReply } from '../sites/compression.ts';
import { serveSite } from '../sites/serve.ts';
import { parsePreviewHost } from '../sites/preview-hosts.ts';

/** What a write to a client that closed the connection fails with. */
const CLIENT_GONE = new Set(['ERR_STREAM_PREMATURE_CLOSE', 'ECONNRESET', 'EPIPE']);

/**
 * The local platform's stand-in for CloudFront + the serve-site Lambda: requests
 * whose Host is `{subdomain}.{SITE_DOMAIN}` (locally `{subdomain}.localhost:PORT`)
 * or `{label}-{preview_slug}.previews.{SITE_DOMAIN}` (a preview),
 * or a hostname that may be a custom domain (`www.example.com:PORT`: dotted, not
 * an IP address, not under the site or function domain) are answered by the
 * serving module; bare `localhost` (the API) and `*.fn.localhost` (the functions
 * door) pass through. A custom domain's geo rule reads the country from the
 * GEO_COUNTRY_HEADER request header, as CloudFront's would.
 */
export const siteHostnameHandler: HostnameHandler = (req, res) => {
  const host = req.headers.host;
  if (!siteSubdomain(host) && !parsePreviewHost(host) && !customDomainHost(host)) return false;
  return answerSite(req, res);
};

async function answerSite(req: IncomingMessage, res: ServerResponse): Promise<true> {
  const served = await serveSite({
    host: req.headers.host!,
    path: req.url ?? '/',
    method: req.method ?? 'GET',
    headers: req.headers as Record<string, string | undefined>,
  });
  // CloudFront's compression, a step of its own after the serving rules (lib/sites/compression.ts).
  const reply = await compressReply(served, req.headers['accept-encoding']);
  res.writeHead(reply.status, reply.headers);
  if (reply.body === null) res.end();
  else if (Buffer.isBuffer(reply.body)) res.end(reply.body);
  else {
    try {
      await pipeline(reply.body, res);
    } catch (error) {
      // A visitor who closed the page: nothing went wrong here, so no error and no stack.
      const code = (error as NodeJS.ErrnoException).code;
      if (CLIENT_GONE.has(code ?? '') && !res.writableFinished) {
        logger.debug('site client disconnected before the reply ended', { host: req.headers.host, path: req.url });
        return true;
      }
      throw error;
    }
  }
  return true;
}
