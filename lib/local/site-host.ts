import { pipeline } from 'node:stream/promises';
import type { HostHandler } from './api-server.ts';
import { serveSite, siteSubdomain } from '../sites/serve.ts';

/**
 * The local platform's stand-in for CloudFront + the serve-site Lambda: requests
 * whose Host is `{subdomain}.{SITE_DOMAIN}` (locally `{subdomain}.localhost:PORT`)
 * are answered by the serving module; bare `localhost` (the API) and
 * `*.fn.localhost` (the functions door) pass through.
 */
export const siteHostHandler: HostHandler = async (req, res) => {
  if (!siteSubdomain(req.headers.host)) return false;
  const reply = await serveSite({
    host: req.headers.host!,
    path: req.url ?? '/',
    method: req.method ?? 'GET',
    headers: req.headers as Record<string, string | undefined>,
  });
  res.writeHead(reply.status, reply.headers);
  if (reply.body === null) res.end();
  else if (Buffer.isBuffer(reply.body)) res.end(reply.body);
  else await pipeline(reply.body, res);
  return true;
};
