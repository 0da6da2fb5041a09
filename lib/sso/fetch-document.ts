import type { IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { ResolvedAddress } from './address-guard.ts';

export type FetchFailure =
  | { reason: 'connect_failed' }
  | { reason: 'timeout' }
  | { reason: 'redirect'; status: number }
  | { reason: 'http_status'; status: number }
  | { reason: 'too_large'; max_bytes: number }
  | { reason: 'not_json' };

export class DocumentFetchError extends Error {
  constructor(readonly failure: FetchFailure) {
    super(`discovery fetch failed: ${failure.reason}`);
  }
}

/**
 * `request` of node:https, or of node:http for an http: URL (a local endpoint). node:http is loaded on first use
 * only: on Node 22 an ESM import of it reads every export, WebSocket's lazy getter included, which loads undici
 * (about 30 ms of CPU in a cold start; nodejs/node#57649), and a deployed Lambda only ever calls https: URLs.
 */
export async function requestFor(url: URL): Promise<typeof httpsRequest> {
  return url.protocol === 'https:' ? httpsRequest : (await import('node:http')).request;
}

/**
 * A lookup that answers with the address the guard already checked, so the
 * socket connects there and nowhere else (no second DNS query). Node 22 asks
 * with `all: true` when it races address families, so both shapes are served.
 */
export function pinnedLookup(pinned: ResolvedAddress): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address: pinned.address, family: pinned.family }]);
    else callback(null, pinned.address, pinned.family);
  }) as unknown as LookupFunction;
}

async function getOnce(url: URL, pinned: ResolvedAddress, timeoutMs: number, maxBytes: number): Promise<unknown> {
  const send = await requestFor(url);
  return new Promise((resolve, reject) => {
    const request = send(
      url,
      {
        method: 'GET',
        lookup: pinnedLookup(pinned),
        // TLS still verifies the certificate against the host name (SNI from the URL), not the address.
        headers: { accept: 'application/json', 'user-agent': 'Slipway-SSO-Discovery/1' },
        agent: false,
      },
      (response: IncomingMessage) => {
        const status = response.statusCode ?? 0;
        // Redirects are refused, not followed: a hop could lead to an address the guard never saw.
        if (status >= 300 && status < 400) {
          response.destroy();
          return reject(new DocumentFetchError({ reason: 'redirect', status }));
        }
        if (status !== 200) {
          response.destroy();
          return reject(new DocumentFetchError({ reason: 'http_status', status }));
        }
        const declared = Number(response.headers['content-length']);
        if (Number.isFinite(declared) && declared > maxBytes) {
          response.destroy();
          return reject(new DocumentFetchError({ reason: 'too_large', max_bytes: maxBytes }));
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) {
            response.destroy();
            reject(new DocumentFetchError({ reason: 'too_large', max_bytes: maxBytes }));
            return;
          }
          chunks.push(chunk);
        });
        response.on('error', () => reject(new DocumentFetchError({ reason: 'connect_failed' })));
        response.on('end', () => {
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          } catch {
            reject(new DocumentFetchError({ reason: 'not_json' }));
          }
        });
      },
    );
    // One budget for the whole exchange: connect, headers and body.
    const timer = setTimeout(() => {
      request.destroy();
      reject(new DocumentFetchError({ reason: 'timeout' }));
    }, timeoutMs);
    request.on('close', () => clearTimeout(timer));
    request.on('error', () => reject(new DocumentFetchError({ reason: 'connect_failed' })));
    request.end();
  });
}

/**
 * Fetches a JSON document from the checked addresses, in resolver order,
 * moving to the next address only when a connection cannot be made.
 */
export async function fetchJsonDocument(
  url: URL,
  addresses: ResolvedAddress[],
  options: { timeoutMs: number; maxBytes: number },
): Promise<unknown> {
  let lastError: DocumentFetchError = new DocumentFetchError({ reason: 'connect_failed' });
  for (const address of addresses) {
    try {
      return await getOnce(url, address, options.timeoutMs, options.maxBytes);
    } catch (error) {
      if (!(error instanceof DocumentFetchError)) throw error;
      lastError = error;
      if (error.failure.reason !== 'connect_failed') throw error;
    }
  }
  throw lastError;
}
