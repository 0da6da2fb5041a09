import { afterEach, describe, expect, it } from 'vitest';
import { clearedSessionCookie, isCrossSiteWrite, sessionCookie, sessionTokenFromCookies } from '../../lib/identity/session-cookie.ts';

const token = `slw_s_${'x'.repeat(43)}`;
afterEach(() => {
  delete process.env.CONSOLE_URL;
});

describe('the session cookie', () => {
  it('is Secure behind the cloud console (https), and HttpOnly, SameSite=Lax, Path=/ everywhere', () => {
    process.env.CONSOLE_URL = 'https://app.example.test';
    expect(sessionCookie(token)).toBe(`slipway_session=${token}; Path=/; Max-Age=2592000; HttpOnly; SameSite=Lax; Secure`);
    expect(clearedSessionCookie()).toBe('slipway_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax; Secure');
    process.env.CONSOLE_URL = 'http://app.localhost:3240';
    expect(sessionCookie(token)).toBe(`slipway_session=${token}; Path=/; Max-Age=2592000; HttpOnly; SameSite=Lax`);
  });

  it('is read from the request cookies by name only', () => {
    expect(sessionTokenFromCookies(['theme=dark', `slipway_session=${token}`])).toBe(token);
    expect(sessionTokenFromCookies(['xslipway_session=abc'])).toBeNull();
    expect(sessionTokenFromCookies(undefined)).toBeNull();
  });
});

describe('cross-site writes', () => {
  it('are writes whose Origin is not the console or whose Sec-Fetch-Site is not same-origin', () => {
    process.env.CONSOLE_URL = 'https://app.example.test';
    const console = { origin: 'https://app.example.test' };
    expect(isCrossSiteWrite('POST', console)).toBe(false);
    expect(isCrossSiteWrite('DELETE', { ...console, 'sec-fetch-site': 'same-origin' })).toBe(false);
    expect(isCrossSiteWrite('POST', { origin: 'https://someone.example.test' })).toBe(true);
    expect(isCrossSiteWrite('PUT', {})).toBe(true);
    expect(isCrossSiteWrite('PATCH', { ...console, 'sec-fetch-site': 'same-site' })).toBe(true);
    expect(isCrossSiteWrite('GET', { origin: 'https://someone.example.test' })).toBe(false);
  });
});
