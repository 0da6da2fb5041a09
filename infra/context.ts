import type { Construct } from 'constructs';

/**
 * Deployment settings read from CDK context (`cdk deploy -c siteDomain=...`
 * or cdk.json), with the defaults lib/config.ts uses at runtime.
 */
export interface DeploymentSettings {
  /** Sites are served at {subdomain}.{siteDomain}. */
  siteDomain: string;
  /** Functions are served at {name}-{subdomain}.{functionDomain}. */
  functionDomain: string;
  /** The console's hostname: its CloudFront distribution serves the dashboard and /api/* (default `app.{siteDomain}`). */
  consoleDomain: string;
  /** Browser origins allowed to call the API (the dashboard). Empty: no CORS. */
  corsOrigins: string[];
  /** Sender of platform e-mail (an SES identity of this account): the address, or its domain, must be verified. */
  mailFrom: string;
  /** Dashboard page that confirms an e-mail address (the link adds `?token=`); default `https://app.{siteDomain}/confirm-email`. */
  emailConfirmUrl: string;
  /** Abuse-report intake: `off` answers 503 ABUSE_INTAKE_UNAVAILABLE and records nothing. */
  abuseIntake: 'on' | 'off';
  /** Abuse reports per submitter (IP address, reporter e-mail) and platform-wide, per hour. */
  abuseReportsPerSubmitterPerHour: number;
  abuseReportsPlatformPerHour: number;
}

export const settingDefaults = {
  siteDomain: 'slipway.site',
  functionDomain: 'fn.slipway.site',
  abuseReportsPerSubmitterPerHour: 10,
  abuseReportsPlatformPerHour: 500,
} as const;

/** A context value given on the command line is a string; in cdk.json it may be a list. */
function listOf(value: unknown): string[] {
  const items = Array.isArray(value) ? value : typeof value === 'string' ? value.split(',') : [];
  return items.map((item) => String(item).trim()).filter(Boolean);
}

export function readSettings(scope: Construct): DeploymentSettings {
  const text = (key: string, fallback: string) => {
    const value = scope.node.tryGetContext(key);
    return typeof value === 'string' && value.trim() !== '' ? value.trim() : fallback;
  };
  const corsOrigins = listOf(scope.node.tryGetContext('corsOrigins'));
  for (const origin of corsOrigins) {
    // API Gateway wants scheme://host[:port] with no path; catching a typo here beats a failed deploy.
    if (!/^https?:\/\/[^/\s]+$/.test(origin)) throw new Error(`corsOrigins: "${origin}" is not an origin (scheme://host[:port])`);
  }
  const siteDomain = text('siteDomain', settingDefaults.siteDomain);
  const consoleDomain = text('consoleDomain', `app.${siteDomain}`).toLowerCase();
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/.test(consoleDomain)) {
    throw new Error(`consoleDomain: "${consoleDomain}" is not a hostname`);
  }
  const mailFrom = text('mailFrom', `no-reply@${siteDomain}`);
  if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(mailFrom)) throw new Error(`mailFrom: "${mailFrom}" is not an e-mail address`);
  const emailConfirmUrl = text('emailConfirmUrl', `https://app.${siteDomain}/confirm-email`);
  // lib/account/email-verification.ts builds the link with `new URL()`: an unparsable value would fail every resend.
  if (!/^https?:\/\/[^/\s]+(\/\S*)?$/.test(emailConfirmUrl) || !URL.canParse(emailConfirmUrl)) {
    throw new Error(`emailConfirmUrl: "${emailConfirmUrl}" is not an http(s) URL`);
  }
  const abuseIntake = text('abuseIntake', 'on');
  if (abuseIntake !== 'on' && abuseIntake !== 'off') throw new Error(`abuseIntake: "${abuseIntake}" is not on or off`);
  const count = (key: string, fallback: number) => {
    // A number in cdk.json, a string on the command line.
    const raw = scope.node.tryGetContext(key);
    const value = typeof raw === 'number' ? raw : Number(text(key, String(fallback)));
    if (!Number.isInteger(value) || value < 1) throw new Error(`${key}: must be a whole number of at least 1`);
    return value;
  };
  return {
    abuseIntake,
    abuseReportsPerSubmitterPerHour: count('abuseReportsPerSubmitterPerHour', settingDefaults.abuseReportsPerSubmitterPerHour),
    abuseReportsPlatformPerHour: count('abuseReportsPlatformPerHour', settingDefaults.abuseReportsPlatformPerHour),
    siteDomain,
    consoleDomain,
    functionDomain: text('functionDomain', settingDefaults.functionDomain),
    corsOrigins,
    mailFrom,
    emailConfirmUrl,
  };
}

/**
 * The shape of the functions network and the container door (docs/deploy.md, "What it costs"): the defaults are the
 * cheapest shape that keeps the spec's 10 MiB bodies and the egress rule; these switches buy capacity and redundancy.
 */
export interface CapacitySettings {
  /** 0: one NAT instance (t4g.nano) for the functions VPC; 1 or 2: that many managed NAT gateways. */
  natGateways: 0 | 1 | 2;
  /** 0: the container door on one EC2 instance, the VPC origin's target; 1 or more: that many Fargate tasks behind an internal ALB. */
  doorTasks: number;
  /**
   * Blank runner tasks (Fargate Spot) kept started ahead of queued invocations, each taking one invocation
   * (docs/functions.md, "The warm pool"); 0: every invocation starts its own task. Default 1 (what fits the idle cap).
   */
  functionsWarmTasks: number;
}

/** The warm pool's size when the context does not say: one blank task, the most that keeps the idle month under $25. */
export const defaultFunctionsWarmTasks = 1;

export function readCapacitySettings(scope: Construct): CapacitySettings {
  const whole = (key: string, max: number, fallback = 0): number => {
    const raw = scope.node.tryGetContext(key);
    if (raw === undefined || raw === '') return fallback;
    const value = typeof raw === 'number' ? raw : Number(String(raw).trim());
    if (!Number.isInteger(value) || value < 0 || value > max) throw new Error(`${key}: must be a whole number from 0 to ${max}`);
    return value;
  };
  return {
    natGateways: whole('natGateways', 2) as 0 | 1 | 2,
    doorTasks: whole('doorTasks', 10),
    functionsWarmTasks: whole('functionsWarmTasks', 10, defaultFunctionsWarmTasks),
  };
}
