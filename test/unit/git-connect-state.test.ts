import { describe, expect, it } from 'vitest';
import { CONNECT_STATE_TTL_SECONDS, createConnectState, verifierChallenge, verifyConnectState } from '../../lib/git/connect-state.ts';

const secret = 'test-secret-0123456789abcdef0123456789abcdef';
const teamId = '0b6f3a52-8a7e-4f5b-9a43-6d0b1c2e3f41';
const userId = '5d7c9e1a-2b3c-4d5e-8f90-a1b2c3d4e5f6';
const issuedAt = new Date('2026-11-22T10:00:00.000Z');

describe('verifyConnectState', () => {
  it('accepts a fresh state and returns the team, user and expiry it was signed over', () => {
    const { state, verifier, expiresAt } = createConnectState({ teamId, userId, now: issuedAt, secret });
    expect(expiresAt.toISOString()).toBe('2026-11-22T10:10:00.000Z');
    expect(CONNECT_STATE_TTL_SECONDS).toBe(600);
    const check = verifyConnectState(state, new Date('2026-11-22T10:09:59.000Z'), { secret, verifier });
    expect(check).toEqual({ ok: true, teamId, userId, expiresAt, challenge: verifierChallenge(verifier) });
  });

  it('refuses an expired state, from the expiry second on', () => {
    const { state } = createConnectState({ teamId, userId, now: issuedAt, secret });
    expect(verifyConnectState(state, new Date('2026-11-22T10:10:00.000Z'), { secret })).toEqual({ ok: false, reason: 'expired' });
    expect(verifyConnectState(state, new Date('2026-11-23T00:00:00.000Z'), { secret })).toEqual({ ok: false, reason: 'expired' });
  });

  it('refuses a tampered payload (another team, a later expiry) and a tampered signature', () => {
    const { state } = createConnectState({ teamId, userId, now: issuedAt, secret });
    const [payload, signature] = state.split('.') as [string, string];
    const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString());
    for (const change of [
      { team_id: '11111111-1111-4111-8111-111111111111' },
      { exp: decoded.exp + 86_400 },
      { user_id: 'someone-else' },
    ]) {
      const forged = Buffer.from(JSON.stringify({ ...decoded, ...change })).toString('base64url');
      expect(verifyConnectState(`${forged}.${signature}`, issuedAt, { secret })).toEqual({ ok: false, reason: 'bad_signature' });
    }
    const flipped = signature.slice(0, -2) + (signature.endsWith('AA') ? 'BB' : 'AA');
    expect(verifyConnectState(`${payload}.${flipped}`, issuedAt, { secret })).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('refuses a state signed with another secret', () => {
    const { state } = createConnectState({ teamId, userId, now: issuedAt, secret: 'another-secret' });
    expect(verifyConnectState(state, issuedAt, { secret })).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('refuses malformed states', () => {
    for (const state of ['', 'abc', 'a.b.c', 'not base64!.sig', `${'x'.repeat(3000)}.y`]) {
      expect(verifyConnectState(state, issuedAt, { secret })).toEqual({ ok: false, reason: 'malformed' });
    }
  });

  it('refuses a valid state presented with the wrong verifier', () => {
    const { state } = createConnectState({ teamId, userId, now: issuedAt, secret });
    const other = createConnectState({ teamId, userId, now: issuedAt, secret });
    expect(verifyConnectState(state, issuedAt, { secret, verifier: other.verifier })).toEqual({ ok: false, reason: 'verifier_mismatch' });
  });

  it('makes every state unique and keeps the verifier out of it', () => {
    const a = createConnectState({ teamId, userId, now: issuedAt, secret });
    const b = createConnectState({ teamId, userId, now: issuedAt, secret });
    expect(a.state).not.toBe(b.state);
    expect(a.verifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a.state.split('.')[0]!, 'base64url').toString()).not.toContain(a.verifier);
  });
});
