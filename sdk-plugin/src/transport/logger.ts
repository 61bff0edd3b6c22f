/**
 * A plugin's logger: one JSON object per line on stderr, which the core reads
 * and re-emits under the plugin's name and version. Never log secret values:
 * the core writes these lines to its own log as they are.
 */
import type { Logger } from '../system-view.js';

export type JsonLogger = Logger & { child(meta: Record<string, unknown>): JsonLogger };

export function createStderrLogger(base: Record<string, unknown> = {}, write: (line: string) => void = (l) => process.stderr.write(l)): JsonLogger {
  const emit = (level: string, msg: string, meta?: Record<string, unknown>) => {
    let line: string;
    try {
      line = JSON.stringify({ ...base, ...meta, level, msg, time: new Date().toISOString() });
    } catch {
      line = JSON.stringify({ ...base, level, msg, time: new Date().toISOString() });
    }
    write(line + '\n');
  };
  return {
    debug: (m, meta) => emit('debug', m, meta),
    info: (m, meta) => emit('info', m, meta),
    warn: (m, meta) => emit('warn', m, meta),
    error: (m, meta) => emit('error', m, meta),
    child: (meta) => createStderrLogger({ ...base, ...meta }, write),
  };
}
