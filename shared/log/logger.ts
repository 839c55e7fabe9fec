import { Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';

/** Keys whose values never reach a log line, wherever they appear in a logged object. */
const SECRET_KEYS = new Set([
  'password',
  'currentpassword',
  'token',
  'zt-session',
  'authorization',
  'secret',
  'passwordhash',
  'salt',
  'jwt',
  'privatekey',
]);

function redact(value: unknown, depth = 0): unknown {
  if (depth > 8 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    out[key] = SECRET_KEYS.has(key.toLowerCase()) ? '[redacted]' : redact(inner, depth + 1);
  }
  return out;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** The service name on every line (and the metrics' `service` dimension) unless `POWERTOOLS_SERVICE_NAME` says. */
export const DEFAULT_SERVICE_NAME = 'ziti-controller';

/**
 * A structured JSON logger: one line per event, with the request's fixed context (request id, caller, trace id)
 * merged into each line. Backed by Powertools' Logger, which adds the Lambda context of the invocation (function
 * request id, cold start, function name, X-Ray trace id) once its middleware has run for the invocation.
 */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  /** A logger whose lines also carry `context` (secrets redacted like any field). */
  child(context: Record<string, unknown>): Logger;
  /**
   * A logger like {@link child} whose lines go through a Powertools instance of their own, so they never carry the
   * Lambda context an invocation gives this one: for what runs beside the invocations in one process (locally, the
   * routers' control channel next to the HTTP server's functions). `injectLambdaContext` keeps an invocation's
   * context on the instance after the invocation has ended (Powertools scopes it to the invocation only in Lambda's
   * concurrent mode), so every later line of the shared instance carries the last request's ids.
   */
  detached(context: Record<string, unknown>): Logger;
  /** The Powertools logger every line goes through: what `injectLambdaContext` is given. */
  readonly powertools: PowertoolsLogger;
}

export interface LoggerOptions {
  /** Defaults to `POWERTOOLS_LOG_LEVEL`, then `LOG_LEVEL`, then info. */
  readonly level?: LogLevel;
  /** Where lines go instead of stdout: the tests keep them to assert on. */
  readonly write?: (line: string) => void;
}

/**
 * Powertools' logger printing each line through `write`. The class is made per sink so that the sink is there even
 * for lines printed while Powertools' constructor runs (it replays lines buffered during its own set-up).
 */
function loggerWritingTo(write: (line: string) => void, options: ConstructorParameters<typeof PowertoolsLogger>[0]) {
  class SinkLogger extends PowertoolsLogger {
    protected override printLog(_level: number, log: Parameters<PowertoolsLogger['printLog']>[1]): void {
      log.prepareForPrint();
      write(JSON.stringify(log.getAttributes(), this.getJsonReplacer()));
    }
    protected override createLogger(
      childOptions?: ConstructorParameters<typeof PowertoolsLogger>[0],
    ): PowertoolsLogger {
      return loggerWritingTo(write, childOptions);
    }
  }
  return new SinkLogger(options);
}

function levelOf(options: LoggerOptions): string {
  return (options.level ?? process.env.POWERTOOLS_LOG_LEVEL ?? process.env.LOG_LEVEL ?? 'info').toUpperCase();
}

/**
 * Our interface over one Powertools logger. The request's fields travel with each call, never as keys appended to
 * the shared Powertools instance: the local server runs a function's requests concurrently, and appended keys
 * would leak from one request's lines into another's.
 */
function wrap(
  powertools: PowertoolsLogger,
  context: Record<string, unknown>,
  newPowertools: () => PowertoolsLogger,
): Logger {
  const fieldsOf = (fields?: Record<string, unknown>) => ({
    ...context,
    ...(fields ? (redact(fields) as object) : {}),
  });
  return {
    debug: (message, fields) => powertools.debug(message, fieldsOf(fields)),
    info: (message, fields) => powertools.info(message, fieldsOf(fields)),
    warn: (message, fields) => powertools.warn(message, fieldsOf(fields)),
    error: (message, fields) => powertools.error(message, fieldsOf(fields)),
    child: (more) => wrap(powertools, { ...context, ...(redact(more) as object) }, newPowertools),
    detached: (more) => wrap(newPowertools(), { ...context, ...(redact(more) as object) }, newPowertools),
    powertools,
  };
}

/** Creates a logger; secrets are redacted by key name before anything reaches Powertools. */
export function createLogger(context: Record<string, unknown> = {}, options: LoggerOptions = {}): Logger {
  const settings = {
    serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? DEFAULT_SERVICE_NAME,
    logLevel: levelOf(options) as 'INFO',
  };
  const newPowertools = () =>
    options.write ? loggerWritingTo(options.write, settings) : new PowertoolsLogger(settings);
  return wrap(newPowertools(), redact(context) as Record<string, unknown>, newPowertools);
}
