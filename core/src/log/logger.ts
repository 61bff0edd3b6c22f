/**
 * Structured logging through winston. Never pass a secret (token id, password,
 * key material, request body) in a message or meta: log accessors, request ids
 * and paths instead. Plugin output is re-emitted here tagged with the plugin.
 */
import winston from 'winston';
import type { Logger } from '@strongroom/sdk-plugin/host';

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

export interface CoreLogger extends Logger {
  child(meta: Record<string, unknown>): CoreLogger;
  /** Changes the level at runtime (e.g. sys/loggers). */
  setLevel(level: LogLevel): void;
}

const LEVELS = { error: 0, warn: 1, info: 2, debug: 3, trace: 4 };

export function createLogger(opts: { level?: LogLevel; json?: boolean; silent?: boolean } = {}): CoreLogger {
  const base = winston.createLogger({
    levels: LEVELS,
    level: opts.level ?? 'info',
    silent: opts.silent ?? false,
    format: opts.json === false
      ? winston.format.combine(winston.format.timestamp(), winston.format.printf(renderLine))
      : winston.format.combine(winston.format.timestamp(), winston.format.json()),
    transports: [new winston.transports.Console({ stderrLevels: Object.keys(LEVELS) })],
  });
  return wrap(base);
}

function renderLine(info: winston.Logform.TransformableInfo): string {
  const { level, message, timestamp, ...meta } = info;
  const rest = Object.keys(meta).length ? ' ' + JSON.stringify(meta) : '';
  return `${String(timestamp)} [${level.toUpperCase()}] ${String(message)}${rest}`;
}

function wrap(w: winston.Logger): CoreLogger {
  return {
    debug: (msg, meta) => w.log('debug', msg, meta),
    info: (msg, meta) => w.log('info', msg, meta),
    warn: (msg, meta) => w.log('warn', msg, meta),
    error: (msg, meta) => w.log('error', msg, meta),
    child: (meta) => wrap(w.child(meta)),
    setLevel: (level) => {
      w.level = level;
    },
  };
}

/** A logger that drops everything (tests). */
export function createNullLogger(): CoreLogger {
  const noop = () => undefined;
  const l: CoreLogger = { debug: noop, info: noop, warn: noop, error: noop, child: () => l, setLevel: noop };
  return l;
}
