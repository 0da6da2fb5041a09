import type { AbuseCategory } from './categories.ts';

/**
 * The keyword scan rule set (issue 11 item 2): what the scan of each publish
 * looks for in a deployment's text files. Versioned: every scan row records
 * the `RULESET_VERSION` it ran with, so a changed rule set never makes old
 * scores look comparable to new ones. Bump the version with any change to a
 * rule, a weight or a pattern, and say why in docs/trust-and-safety.md.
 *
 * A rule is an id, a category (one of the abuse report categories, so scans
 * and reports speak one vocabulary), the patterns, and a weight. A rule's
 * `hits` is the number of pattern matches in the scanned files; it adds
 * `weight x min(hits, HITS_COUNTED_PER_RULE)` to the score, so a page that
 * repeats one word a thousand times does not outrank a real drainer kit.
 *
 * Patterns are compiled once, here, at module load (global flag, for
 * `matchAll`, which copies the regex and never shares `lastIndex`). Keep
 * them linear: no nested quantifiers, bounded gaps (`[^<]{0,40}`), since the
 * scanner runs them over attacker-controlled text.
 */
export const RULESET_VERSION = '2026-11-23.1';

/** Hits beyond this count nothing more toward the score. */
export const HITS_COUNTED_PER_RULE = 5;

export interface ScanRule {
  id: string;
  category: AbuseCategory;
  /** What a reviewer should look for when this rule matched. */
  description: string;
  weight: number;
  patterns: readonly RegExp[];
}

const rule = (id: string, category: AbuseCategory, weight: number, description: string, patterns: readonly RegExp[]): ScanRule => ({
  id,
  category,
  weight,
  description,
  patterns: patterns.map((p) => new RegExp(p.source, p.flags.includes('g') ? p.flags : `${p.flags}g`)),
});

export const SCAN_RULES: readonly ScanRule[] = [
  rule('phishing.credential-exfiltration', 'phishing', 40, 'Credentials sent to a chat bot or a third-party form handler', [
    // Phishing kits post the captured form to a Telegram bot: the token and chat id sit in the page's script.
    /api\.telegram\.org\/bot\d{6,12}:[A-Za-z0-9_-]{30,}/,
    /<form\b[^>]{0,200}\baction\s*=\s*["']?https?:\/\/[^"'\s>]{1,200}\.php\b/i,
    /discord(?:app)?\.com\/api\/webhooks\/\d{10,}\/[A-Za-z0-9_-]{20,}/,
  ]),
  rule('phishing.brand-login', 'phishing', 15, 'A sign-in page that names a well-known brand or an account lock-out', [
    /sign[\s-]?in\s+to\s+(?:your\s+)?(?:microsoft|office ?365|outlook|paypal|apple(?: id)?|netflix|coinbase|metamask|online banking)\b/i,
    /\b(?:verify|confirm|unlock|restore)\b[^<]{0,40}\byour (?:account|apple id|paypal|wallet)\b[^<]{0,40}\b(?:suspended|locked|limited|disabled)\b/i,
  ]),
  rule('phishing.password-field', 'phishing', 5, 'A password input (weak alone; weighs with the rules above)', [
    /<input\b[^>]{0,200}\btype\s*=\s*["']?password\b/i,
  ]),
  rule('phishing.seed-phrase', 'phishing', 40, 'A form asking for a wallet recovery phrase', [
    /\b(?:enter|import|restore|validate|sync)\b[^<]{0,40}\b(?:seed|recovery|secret|mnemonic) phrase\b/i,
    /\b(?:12|24)[\s-]word (?:seed|recovery|secret|mnemonic)\b/i,
  ]),
  rule('malware.crypto-drainer', 'malware', 50, 'Wallet drainer script: blanket token approvals or signed-order theft', [
    /\bsetApprovalForAll\s*\(/,
    /\beth_signTypedData_v4\b[\s\S]{0,400}\b(?:Permit|Seaport|OrderComponents)\b/,
    /\b(?:inferno|angel|pink|monkey|venom|ace)[\s_-]?drainer\b/i,
    /\bdrainer\b[\s\S]{0,200}\b(?:walletconnect|ethereum\.request|web3modal)\b/i,
  ]),
  rule('malware.obfuscated-loader', 'malware', 20, 'Script that decodes and runs hidden code', [
    /\beval\s*\(\s*(?:atob|unescape|decodeURIComponent)\s*\(/,
    /\bdocument\.write\s*\(\s*unescape\s*\(/,
    /\bnew Function\s*\(\s*atob\s*\(/,
  ]),
  rule('malware.browser-miner', 'malware', 30, 'In-browser cryptocurrency miner', [
    /\b(?:coinhive|cryptonight|coinimp|webminepool|cryptoloot)\b/i,
  ]),
  rule('fraud.tech-support-scam', 'fraud', 30, 'Fake virus warning that tells the visitor to call a number', [
    /\byour (?:computer|pc|device|system) (?:is|has been) (?:infected|blocked|locked|compromised)\b/i,
    /\bcall (?:microsoft|apple|windows|amazon) (?:support|help ?desk)\b/i,
  ]),
  rule('fraud.giveaway-doubling', 'fraud', 30, 'Crypto "send X, get 2X back" giveaway', [
    /\bsend\b[^<]{0,40}\b(?:btc|eth|bitcoin|ether|usdt)\b[^<]{0,60}\b(?:get|receive)\b[^<]{0,20}\b(?:double|2x|twice)\b/i,
  ]),
];

/**
 * How urgent a category is for a reviewer: the scan's `priority` is the
 * highest of its matched rules' categories (`none` without a match).
 * Ordering in the admin listing: reported first, then this, then score.
 */
export const SCAN_PRIORITIES = ['critical', 'high', 'medium', 'low', 'none'] as const;
export type ScanPriority = (typeof SCAN_PRIORITIES)[number];

export const CATEGORY_PRIORITY: Partial<Record<AbuseCategory, ScanPriority>> = {
  malware: 'critical',
  phishing: 'high',
  fraud: 'medium',
};

export const priorityOf = (category: AbuseCategory): ScanPriority => CATEGORY_PRIORITY[category] ?? 'low';

/** Rank for sorting: 0 is most urgent. */
export const priorityRank = (priority: ScanPriority): number => SCAN_PRIORITIES.indexOf(priority);
