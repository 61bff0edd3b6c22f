/**
 * Structured logging through winston. Never pass a secret (token id, password,
 * key material, request body) in a message or meta: log accessors, request ids
 * and paths instead. Plugin output is re-emitted here tagged with the plugin.
 *
 * Levels: one base level (the config's `log_level`) and, as Vault's
 * sys/loggers/:name, an override per named logger (`named('expiration')`).
 * Winston itself lets everything through; the level check is ours, so a
 * change applies at once to every child already handed out.
 *
 * `monitor()` taps every line at a level of its own, whatever the loggers'
 * levels (Vault's sys/monitor): a debug monitor sees debug lines from a
 * server logging at info.
 */
import winston from 'winston';
import type { Logger } from '@strongroom/sdk-plugin/host';

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

export interface CoreLogger extends Logger {
  child(meta: Record<string, unknown>): CoreLogger;
  /** A logger for one part of the server (`expiration`, `plugins`, `request`...), its level changeable on its own. */
  named(name: string): CoreLogger;
  /** Logs at a level chosen at run time (`log_requests_level`). */
  log(level: LogLevel, msg: string, meta?: Record<string, unknown>): void;
  /** Whether a line at `level` would go anywhere (the output or a monitor): a caller skips building one that would not. */
  wants(level: LogLevel): boolean;
  /** Changes the base level at runtime (sys/loggers). */
  setLevel(level: LogLevel): void;
  /** Sets (or with null, clears) the level of one named logger. */
  setNamedLevel(name: string, level: LogLevel | null): void;
  /** Base level, and each named logger with its effective level. */
  levels(): { base: LogLevel; named: Record<string, LogLevel> };
  /** Back to the levels the server started with. */
  resetLevels(): void;
  /** Calls `onLine` with every line at `level` or above, rendered in `format`, until the returned function is called. */
  monitor(level: LogLevel, format: LogFormat, onLine: (line: string) => void): () => void;
}

export type LogFormat = 'standard' | 'json';

export const LEVELS: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3, trace: 4 };

export interface LoggerOptions {
  level?: LogLevel;
  /** `standard` (one line, human) or `json`; default json. */
  format?: LogFormat;
  /** Also append to this file (`log_file`). */
  file?: string;
  silent?: boolean;
}

export function createLogger(opts: LoggerOptions = {}): CoreLogger {
  const format =
    opts.format === 'standard'
      ? winston.format.combine(winston.format.timestamp(), winston.format.printf(renderLine))
      : winston.format.combine(winston.format.timestamp(), winston.format.json());
  const transports: winston.transport[] = [new winston.transports.Console({ stderrLevels: Object.keys(LEVELS) })];
  if (opts.file) transports.push(new winston.transports.File({ filename: opts.file }));
  const base = winston.createLogger({ levels: LEVELS, level: 'trace', silent: opts.silent ?? false, format, transports });
  const initial = opts.level ?? 'info';
  const state = { base: initial, named: new Map<string, LogLevel>(), known: new Set<string>(), taps: new Set<Tap>() };
  return wrap(base, state, null, initial, {});
}

interface Tap {
  level: LogLevel;
  format: LogFormat;
  onLine(line: string): void;
}

interface LevelState {
  base: LogLevel;
  named: Map<string, LogLevel>;
  known: Set<string>;
  taps: Set<Tap>;
}

function renderLine(info: winston.Logform.TransformableInfo): string {
  const { level, message, timestamp, ...meta } = info;
  const rest = Object.keys(meta).length ? ' ' + JSON.stringify(meta) : '';
  return `${String(timestamp)} [${level.toUpperCase()}] ${String(message)}${rest}`;
}

/** `bound`: the meta of the child and named loggers this one descends from (winston adds it to its own lines; a tap needs it too). */
function wrap(w: winston.Logger, state: LevelState, name: string | null, initial: LogLevel, bound: Record<string, unknown>): CoreLogger {
  const enabled = (level: LogLevel) => LEVELS[level] <= LEVELS[(name !== null ? state.named.get(name) : undefined) ?? state.base];
  const log = (level: LogLevel, msg: string, meta?: Record<string, unknown>) => {
    if (enabled(level)) w.log(level, msg, meta);
    if (state.taps.size) tap(state.taps, level, msg, { ...bound, ...meta });
  };
  const self: CoreLogger = {
    debug: (msg, meta) => log('debug', msg, meta),
    info: (msg, meta) => log('info', msg, meta),
    warn: (msg, meta) => log('warn', msg, meta),
    error: (msg, meta) => log('error', msg, meta),
    log,
    wants: (level) => enabled(level) || state.taps.size > 0,
    child: (meta) => wrap(w.child(meta), state, name, initial, { ...bound, ...meta }),
    named: (n) => {
      state.known.add(n);
      return wrap(w.child({ logger: n }), state, n, initial, { ...bound, logger: n });
    },
    setLevel: (level) => {
      state.base = level;
    },
    setNamedLevel: (n, level) => {
      state.known.add(n);
      if (level === null) state.named.delete(n);
      else state.named.set(n, level);
    },
    levels: () => ({ base: state.base, named: Object.fromEntries([...state.known].sort().map((n) => [n, state.named.get(n) ?? state.base])) }),
    resetLevels: () => {
      state.base = initial;
      state.named.clear();
    },
    monitor: (level, format, onLine) => {
      const t: Tap = { level, format, onLine };
      state.taps.add(t);
      return () => void state.taps.delete(t);
    },
  };
  return self;
}

/** One line to every tap that wants its level, rendered as the server's own lines are. */
function tap(taps: Set<Tap>, level: LogLevel, message: string, meta: Record<string, unknown>): void {
  let standard: string | undefined;
  let json: string | undefined;
  const timestamp = new Date().toISOString();
  for (const t of taps) {
    if (LEVELS[level] > LEVELS[t.level]) continue;
    if (t.format === 'standard') t.onLine((standard ??= renderLine({ ...meta, level, message, timestamp })));
    else t.onLine((json ??= JSON.stringify({ ...meta, level, message, timestamp })));
  }
}

/** A logger that drops everything (tests). */
export function createNullLogger(): CoreLogger {
  const noop = () => undefined;
  const l: CoreLogger = {
    debug: noop,
    info: noop,
    warn: noop,
    error: noop,
    log: noop,
    wants: () => false,
    child: () => l,
    named: () => l,
    setLevel: noop,
    setNamedLevel: noop,
    levels: () => ({ base: 'info', named: {} }),
    resetLevels: noop,
    monitor: () => noop,
  };
  return l;
}
