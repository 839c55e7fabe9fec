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
const LEVELS: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** A structured JSON logger: one line per event, fixed context (request id, operation) merged into each line. */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  child(context: Record<string, unknown>): Logger;
}

export interface LoggerOptions {
  readonly level?: LogLevel;
  readonly write?: (line: string) => void;
}

/** Creates a logger; secrets are redacted by key name before anything is written. */
export function createLogger(context: Record<string, unknown> = {}, options: LoggerOptions = {}): Logger {
  const threshold = LEVELS[options.level ?? (process.env.LOG_LEVEL as LogLevel | undefined) ?? 'info'] ?? LEVELS.info;
  const write = options.write ?? ((line: string) => process.stdout.write(`${line}\n`));
  const emit = (level: LogLevel, message: string, fields?: Record<string, unknown>) => {
    if (LEVELS[level] < threshold) return;
    const entry = {
      level,
      time: new Date().toISOString(),
      message,
      ...context,
      ...(fields ? (redact(fields) as object) : {}),
    };
    write(JSON.stringify(entry));
  };
  return {
    debug: (message, fields) => emit('debug', message, fields),
    info: (message, fields) => emit('info', message, fields),
    warn: (message, fields) => emit('warn', message, fields),
    error: (message, fields) => emit('error', message, fields),
    child: (more) => createLogger({ ...context, ...(redact(more) as object) }, options),
  };
}
