/**
 * The failure breaker compares failures by signature: the classified line
 * with what changes from run to run (numbers, paths, hashes, quoted names of
 * temporary files) made placeholders, so "exit code 1 after 2301 ms" and
 * "after 2315 ms" are one failure, and a different error is another.
 */
export function failureSignature(message: string): string {
  return message
    .toLowerCase()
    .replace(/\b[0-9a-f]{7,64}\b/g, '<hash>')
    .replace(/(?:[a-z]:)?(?:\/[^\s/:'"`]+)+\/?/g, '<path>')
    .replace(/\d+(?:\.\d+)*/g, '<n>')
    .replace(/\s+/g, ' ')
    .trim();
}

/** What a build's failure is: user-caused failures count in the breaker, the platform's never. */
export type FailureKind = 'user' | 'platform';

export interface ClassifiedFailure {
  kind: FailureKind;
  /** The classified line (`last_build_failure_message`): never raw output beyond the one error line. */
  message: string;
}
