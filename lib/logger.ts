import { config } from './config.ts';
/**
 * Structured JSON logs, one line per entry on stdout, in the shape Lambda's
 * own JSON log format uses (`timestamp`, `level`, `message`) plus the
 * service and the entry's keys. Written here rather than with Powertools'
 * Logger, which cost 22 KB of every handler bundle (docs/deploy.md, "Handler
 * bundles"): what the platform needs is levels, persistent keys for a
 * request, and errors as fields, and those are a JSON.stringify each.
 *
 * The level comes from LOG_LEVEL, else Lambda's own AWS_LAMBDA_LOG_LEVEL
 * (the function's application log level), else POWERTOOLS_LOG_LEVEL (what
 * earlier versions read), else INFO.
 */
const LEVELS = { TRACE: 6, DEBUG: 8, INFO: 12, WARN: 16, ERROR: 20, CRITICAL: 24, SILENT: 28 } as const;
type Level = keyof typeof LEVELS;
/** A log line's fields beside its message: open by nature (each line names its own), serialized as JSON. */
export type LogFields = Record<string, unknown>;

type Extra = LogFields | Error | undefined;

function thresholdFromEnv(): number {
  return LEVELS[config.logLevel() as Level] ?? LEVELS.INFO;
}

/** An Error as plain fields: a thrown value keeps its name, message, stack and cause in the log line. */
function errorFields(error: Error): LogFields {
  const { name, message, stack, cause } = error;
  return { name, message, stack, ...(cause !== undefined ? { cause: cause instanceof Error ? errorFields(cause) : cause } : {}) };
}

function serialize(entry: LogFields): string {
  try {
    return JSON.stringify(entry, (_key, value) =>
      typeof value === 'bigint' ? value.toString() : value instanceof Error ? errorFields(value) : value,
    );
  } catch {
    // A circular value: keep the line, drop what cannot be written.
    return JSON.stringify({
      timestamp: entry.timestamp,
      level: entry.level,
      message: entry.message,
      service: entry.service,
      log_error: 'entry not serializable',
    });
  }
}

export class Logger {
  constructor(
    private readonly keys: LogFields,
    private threshold: number = thresholdFromEnv(),
  ) {}

  /** A logger whose every line also carries `persistentKeys` (a request's ids), at this logger's level. */
  createChild({ persistentKeys }: { persistentKeys: LogFields }): Logger {
    return new Logger({ ...this.keys, ...persistentKeys }, this.threshold);
  }

  /** Loggers created from this one afterwards take the new level too. */
  setLogLevel(level: Level): void {
    this.threshold = LEVELS[level];
  }

  debug(message: string, extra?: Extra): void {
    this.write('DEBUG', message, extra);
  }
  info(message: string, extra?: Extra): void {
    this.write('INFO', message, extra);
  }
  warn(message: string, extra?: Extra): void {
    this.write('WARN', message, extra);
  }
  error(message: string, extra?: Extra): void {
    this.write('ERROR', message, extra);
  }

  private write(level: Level, message: string, extra: Extra): void {
    if (LEVELS[level] < this.threshold) return;
    const fields = extra instanceof Error ? { error: errorFields(extra) } : extra;
    // Warnings and errors on stderr, the rest on stdout, as Lambda's runtime and most log shippers expect.
    const stream = LEVELS[level] >= LEVELS.WARN ? process.stderr : process.stdout;
    stream.write(`${serialize({ timestamp: new Date().toISOString(), level, message, ...this.keys, ...fields })}\n`);
  }
}

/** One structured JSON logger per container; each request logs through a child carrying its ids. */
export const logger = new Logger({ service: 'slipway' });

export type RequestLogger = Logger;

export function requestLogger(requestId: string, traceId: string, route: string): Logger {
  return logger.createChild({ persistentKeys: { request_id: requestId, trace_id: traceId, route } });
}
