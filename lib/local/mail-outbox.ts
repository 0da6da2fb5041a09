import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The local platform's outbox: moto's SES accepts mail and delivers none, so
 * the platform points SES at this loopback server (SES_ENDPOINT_URL), which
 * keeps the last mails for the outbox page (http://app.localhost:PORT/_local/outbox),
 * tells `onMail` of each, and passes every request on to the AWS endpoint
 * unchanged, so moto still records what was sent.
 */
export interface OutboxMail {
  to: string[];
  subject: string;
  text: string;
  at: string;
}

export interface MailOutbox {
  endpoint: string;
  /** Newest first. */
  mails(): OutboxMail[];
  stop(): Promise<void>;
}

const KEPT = 100;

/** SES v2 SendEmail (REST JSON): POST /v2/email/outbound-emails. */
function mailOf(path: string, body: Buffer): OutboxMail | null {
  if (!path.startsWith('/v2/email/outbound-emails')) return null;
  try {
    const request = JSON.parse(body.toString('utf8')) as {
      Destination?: { ToAddresses?: string[] };
      Content?: { Simple?: { Subject?: { Data?: string }; Body?: { Text?: { Data?: string } } } };
    };
    return {
      to: request.Destination?.ToAddresses ?? [],
      subject: request.Content?.Simple?.Subject?.Data ?? '',
      text: request.Content?.Simple?.Body?.Text?.Data ?? '',
      at: new Date().toISOString(),
    };
  } catch {
    return null;
  }
}

export async function startMailOutbox(forwardTo: string, onMail: (mail: OutboxMail) => void = () => undefined): Promise<MailOutbox> {
  const kept: OutboxMail[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        const headers = Object.fromEntries(
          Object.entries(req.headers).filter(([name]) => !['host', 'content-length', 'connection'].includes(name)) as [string, string][],
        );
        try {
          const reply = await fetch(new URL(req.url ?? '/', forwardTo), {
            method: req.method,
            headers,
            body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body,
          });
          const mail = reply.ok ? mailOf(req.url ?? '', body) : null;
          if (mail) {
            kept.unshift(mail);
            kept.length = Math.min(kept.length, KEPT);
            onMail(mail);
          }
          // fetch has decoded the body: its length and encoding headers no longer describe it.
          const replyHeaders = [...reply.headers].filter(
            ([name]) => !['content-length', 'content-encoding', 'transfer-encoding'].includes(name),
          );
          res.writeHead(reply.status, Object.fromEntries(replyHeaders));
          res.end(Buffer.from(await reply.arrayBuffer()));
        } catch {
          res.writeHead(502).end();
        }
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    mails: () => [...kept],
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The sign-in link of a mail, if it is a sign-in mail (lib/identity/sign-in.ts). */
export function signInLinkOf(mail: OutboxMail): string | null {
  return /\bhttps?:\/\/\S+\/sign-in#token=[A-Za-z0-9_-]+/.exec(mail.text)?.[0] ?? null;
}
