/** The one documented list of categories (docs/trust-and-safety.md says what each covers). */
export const ABUSE_CATEGORIES = [
  'phishing',
  'malware',
  'fraud',
  'child_sexual_abuse',
  'terrorist_content',
  'illegal_hate_speech',
  'non_consensual_intimate_imagery',
  'intellectual_property',
  'privacy_violation',
  'illegal_goods_or_services',
  'spam',
  'other_illegal_content',
] as const;

export type AbuseCategory = (typeof ABUSE_CATEGORIES)[number];
