import { request } from 'node:http';
import type { LocalPlatform } from '../../lib/local/platform.ts';
import { signInLinkOf } from '../../lib/local/mail-outbox.ts';

export interface RawReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/**
 * Calls the local API over HTTP from a chosen loopback address (all of 127/8
 * is loopback), so a file can stay inside the per-IP sign-in allowance, with
 * the headers a browser on the console would send (Origin, Cookie).
 */
export function callFrom(
  platform: LocalPlatform,
  ip: string,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<RawReply> {
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  const url = new URL(path, platform.baseUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: url.port,
        path: url.pathname + url.search,
        method,
        localAddress: ip,
        headers: {
          ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
          ...options.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // not JSON
          }
          resolve({ status: res.statusCode!, headers: res.headers, body });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

let nextIp = 20;
/** A loopback address no other test of the file used: its own per-IP allowance. */
export const freshIp = () => `127.0.${Math.floor(nextIp / 250)}.${(nextIp++ % 250) + 2}`;

/** The token of the newest sign-in link mailed to an address, from the platform's outbox. */
export function latestSignInToken(platform: LocalPlatform, email: string): string | null {
  for (const mail of platform.outbox.mails()) {
    const link = mail.to.includes(email) ? signInLinkOf(mail) : null;
    if (link) return new URL(link).hash.replace(/^#token=/, '');
  }
  return null;
}

/** The `name=value` part of a Set-Cookie header. */
export function cookiePair(setCookie: string | string[] | undefined): string {
  const first = Array.isArray(setCookie) ? setCookie[0] : setCookie;
  return (first ?? '').split(';')[0]!;
}

/** Signs an address in as the console does (link, then POST of its token): the session cookie's `name=value`. */
export async function signInByLink(platform: LocalPlatform, email: string): Promise<{ cookie: string; user: any }> {
  const ip = freshIp();
  const sent = await callFrom(platform, ip, 'POST', '/api/v1/auth/sign-in-link', { body: { email } });
  if (sent.status !== 202) throw new Error(`sign-in link: ${sent.status} ${JSON.stringify(sent.body)}`);
  const token = latestSignInToken(platform, email);
  const reply = await callFrom(platform, ip, 'POST', '/api/v1/auth/sign-in', { body: { token }, headers: { origin: platform.consoleUrl } });
  if (reply.status !== 200) throw new Error(`sign-in: ${reply.status} ${JSON.stringify(reply.body)}`);
  return { cookie: cookiePair(reply.headers['set-cookie']), user: reply.body.data };
}
