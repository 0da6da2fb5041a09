import { parse } from 'dotenv';
import * as z from '../schema.ts';

/**
 * Environment variables of a project. The spec says they reach builds only,
 * so `build` is the one target there is, and the default of both the bulk
 * import and the single-variable set request.
 */
export const ENV_ENVIRONMENTS = ['production', 'preview', 'development'] as const;
export type EnvEnvironment = (typeof ENV_ENVIRONMENTS)[number];

export const ENV_TARGETS = ['build'] as const;
export type EnvTarget = (typeof ENV_TARGETS)[number];
/** The one default of `targets`, shared by POST .../env/bulk and PUT .../env/{name}. */
export const DEFAULT_ENV_TARGETS: readonly EnvTarget[] = ['build'];

export const MAX_ENV_NAME_LENGTH = 256;
export const MAX_ENV_VALUE_BYTES = 64 * 1024;
export const MAX_ENV_IMPORT_VARIABLES = 500;
/** Largest .env text accepted by the bulk import. */
export const MAX_ENV_CONTENT_BYTES = 512 * 1024;

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Names the build environment sets itself or that would change how the platform's own tooling runs. */
const RESERVED_PREFIXES = ['AWS_', 'SLIPWAY_', 'LAMBDA_'];
const RESERVED_NAMES = new Set(['PATH', 'HOME', '_HANDLER']);

export const envEnvironmentSchema = z.enum(ENV_ENVIRONMENTS);
export const envTargetsSchema = z.optional(
  z.array(z.enum(ENV_TARGETS)).check(
    z.minLength(1),
    z.refine((targets) => new Set(targets).size === targets.length, 'targets must not repeat a value'),
  ),
);

export type EnvNameProblem = 'invalid_name' | 'reserved_name';

export function envNameProblem(name: string): EnvNameProblem | null {
  if (name.length > MAX_ENV_NAME_LENGTH || !NAME.test(name)) return 'invalid_name';
  const upper = name.toUpperCase();
  if (RESERVED_NAMES.has(upper) || RESERVED_PREFIXES.some((p) => upper.startsWith(p))) return 'reserved_name';
  return null;
}

export const rejectionReasons = {
  invalid_name: 'Names are letters, digits and underscores, not starting with a digit, at most 256 characters.',
  reserved_name: 'This name is reserved by the platform.',
  value_too_large: 'The value is larger than 65536 bytes.',
  not_a_variable_line: 'This line is not NAME=value, a comment or blank.',
} as const;

export type EnvRejection = ({ name: string } | { line: number }) & { reason: keyof typeof rejectionReasons; message: string };

export interface ParsedEnvContent {
  variables: { name: string; value: string }[];
  rejected: EnvRejection[];
}

/** A `NAME=` line, optionally `export`ed; the name part is anything up to `=` so that bad names are reported, not skipped. */
const ASSIGNMENT = /^\s*(?:export\s+)?([^\s=#][^=]*?)\s*=\s*(.*)$/;

/**
 * Lines dotenv silently skips (no `=`), by line number: the report names
 * them so a pasted file with a typo does not lose a variable unnoticed.
 * Continuation lines of a quoted multi-line value are skipped as dotenv does.
 * Only the line number is reported, never its text (it may be a secret).
 */
function unparsableLines(content: string): number[] {
  const lines = content.split(/\r\n|\r|\n/);
  const bad: number[] = [];
  let openQuote: string | null = null;
  lines.forEach((line, index) => {
    if (openQuote) {
      if (line.includes(openQuote)) openQuote = null;
      return;
    }
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) return;
    const match = ASSIGNMENT.exec(line);
    if (!match) {
      bad.push(index + 1);
      return;
    }
    const value = match[2]!;
    const quote = value[0];
    if ((quote === '"' || quote === "'" || quote === '`') && value.indexOf(quote, 1) === -1) openQuote = quote;
  });
  return bad;
}

/**
 * Parses .env text with dotenv (quotes, multi-line values, comments,
 * `export` prefixes; a later line for the same name wins) and sorts the
 * result into variables to write and rejections with reasons.
 */
export function parseEnvContent(content: string): ParsedEnvContent {
  const parsed = parse(content);
  const variables: ParsedEnvContent['variables'] = [];
  const rejected: EnvRejection[] = unparsableLines(content).map((line) => ({
    line,
    reason: 'not_a_variable_line',
    message: rejectionReasons.not_a_variable_line,
  }));
  for (const [name, value] of Object.entries(parsed)) {
    const problem = envNameProblem(name);
    if (problem) {
      rejected.push({ name, reason: problem, message: rejectionReasons[problem] });
    } else if (Buffer.byteLength(value) > MAX_ENV_VALUE_BYTES) {
      rejected.push({ name, reason: 'value_too_large', message: rejectionReasons.value_too_large });
    } else {
      variables.push({ name, value });
    }
  }
  return { variables, rejected };
}
