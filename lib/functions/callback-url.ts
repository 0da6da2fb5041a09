import { config } from '../config.ts';
import { type AddressRefusal, checkIssuerAddress, type ResolvedAddress, type Resolver } from '../sso/address-guard.ts';

/**
 * The rule of a completion callback's URL (`X-Callback-Url` on the queued POST): https:// (http:// only to loopback
 * and only where the local platform allows loopback), at most 2,048 characters, no user name or password, and a
 * host whose every resolved address passes the functions' egress address rule (the shared guard of
 * lib/sso/address-guard.ts: never private, loopback, link-local, the metadata address or an embedded form of them).
 * Checked at the POST and again at each delivery, which connects to the addresses checked then.
 */
export const MAX_CALLBACK_URL_CHARS = 2048;

export type CallbackUrlRefusal =
  | AddressRefusal
  | 'too_long'
  | 'not_a_url'
  | 'scheme_not_allowed'
  | 'http_not_allowed'
  | 'credentials_in_url'
  | 'hostname_missing'
  | 'unresolvable';

export const callbackUrlRefusals: Record<CallbackUrlRefusal, string> = {
  too_long: 'The callback URL is over 2,048 characters.',
  not_a_url: 'The callback URL is not an absolute URL.',
  scheme_not_allowed: 'The callback URL must be an https:// address.',
  http_not_allowed: 'The callback URL must be an https:// address.',
  credentials_in_url: 'The callback URL must not contain a user name or password.',
  hostname_missing: 'The callback URL has no host name.',
  unresolvable: 'The callback URL’s host name does not resolve.',
  metadata_address: 'The callback URL resolves to a cloud metadata address, which is never called.',
  loopback_address: 'The callback URL resolves to a loopback address, which is never called.',
  private_address: 'The callback URL resolves to a private network address, which is never called.',
  link_local_address: 'The callback URL resolves to a link-local address, which is never called.',
  unspecified_address: 'The callback URL resolves to an unspecified address, which is never called.',
  multicast_address: 'The callback URL resolves to a multicast or broadcast address, which is never called.',
  reserved_address: 'The callback URL resolves to a reserved address, which is never called.',
};

export type CallbackUrlCheck = { ok: true; url: URL; addresses: ResolvedAddress[] } | { ok: false; reason: CallbackUrlRefusal };

export async function checkCallbackUrl(raw: string, options: { resolve?: Resolver } = {}): Promise<CallbackUrlCheck> {
  if (raw.length > MAX_CALLBACK_URL_CHARS) return { ok: false, reason: 'too_long' };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'not_a_url' };
  }
  if (url.username || url.password) return { ok: false, reason: 'credentials_in_url' };
  // The guard judges the scheme and the host (a callback may carry a query string, which it would refuse).
  const check = await checkIssuerAddress(new URL(`${url.protocol}//${url.host}/`), {
    allowLoopbackHttp: config.functionsCallbackAllowLoopback(),
    resolve: options.resolve,
  });
  if (check.ok) return { ok: true, url, addresses: check.addresses };
  if ('unresolvable' in check) return { ok: false, reason: 'unresolvable' };
  // The guard's other refusals cannot come from an origin URL; they count as a bad URL.
  const reason = check.refusal in callbackUrlRefusals ? (check.refusal as CallbackUrlRefusal) : 'not_a_url';
  return { ok: false, reason };
}
