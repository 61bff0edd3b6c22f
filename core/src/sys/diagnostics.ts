/**
 * A live look inside the node, as Vault's: sys/monitor (the server's log
 * lines, streamed, at a level and format of the caller's choosing),
 * sys/host-info and sys/in-flight-req. All three need sudo (backend.ts) and
 * exist in the root namespace only: they show the whole server.
 */
import { badRequest, f } from '@strongroom/sdk-plugin/host';
import { LEVELS, type CoreLogger, type LogFormat, type LogLevel } from '../log/logger.js';
import type { InProcessResponse } from '../request/ports.js';
import { hostInfo } from './host-info.js';
import { defineSysPath, type SysPathDef } from './sys-path.js';
import type { SysDeps } from './deps.js';

/** Lines a slow reader may fall behind by before the newest are dropped (Vault drops them too). */
const MAX_QUEUED_LINES = 2048;

export function diagnosticPaths(deps: Pick<SysDeps, 'logger' | 'inFlight' | 'hostPaths'>): SysPathDef[] {
  return [
    defineSysPath({
      rootOnly: true,
      pattern: 'monitor',
      fields: {
        log_level: f.query(f.string().optional().describe('trace, debug, info (default), warn or error: lines at this level and above, whatever the server logs at.')),
        log_format: f.query(f.string().optional().describe('standard (default) or json.')),
      },
      synopsis: 'Stream the server\'s log lines as they are written, until the client disconnects.',
      operations: {
        read: {
          summary: 'Stream log lines.',
          handler: async (req) => {
            const level = (req.data.log_level ?? 'info').trim().toLowerCase();
            if (!Object.hasOwn(LEVELS, level)) throw badRequest(`log_level: must be one of ${Object.keys(LEVELS).join(', ')}`);
            const format = (req.data.log_format ?? 'standard').trim().toLowerCase();
            if (format !== 'standard' && format !== 'json') throw badRequest('log_format: must be "standard" or "json"');
            const response: InProcessResponse = { stream: { contentType: format === 'json' ? 'application/x-ndjson' : 'text/plain; charset=utf-8', stream: logLines(deps.logger, level as LogLevel, format) } };
            return response;
          },
        },
      },
    }),
    defineSysPath({
      rootOnly: true,
      pattern: 'host-info',
      synopsis: 'The host this node runs on: CPUs, CPU times, disks, host, memory.',
      operations: { read: { summary: 'Host information.', handler: async () => ({ data: hostInfo(deps.hostPaths) }) } },
    }),
    defineSysPath({
      rootOnly: true,
      pattern: 'in-flight-req',
      synopsis: 'The requests this node is serving now, by request id (this one included).',
      operations: {
        read: {
          summary: 'In-flight requests.',
          // Vault answers the map itself, not an envelope.
          handler: async () => ({ raw: { status: 200, contentType: 'application/json', body: JSON.stringify(deps.inFlight()) } }),
        },
      },
    }),
  ];
}

/**
 * The log lines from the moment the stream is first read (the tap is taken
 * then, so a reply never written holds nothing) until `return()`: the client
 * went away. Lines that arrive together leave in one chunk.
 */
function logLines(logger: CoreLogger, level: LogLevel, format: LogFormat): AsyncIterableIterator<Uint8Array> {
  const queue: string[] = [];
  let waiting: ((r: IteratorResult<Uint8Array>) => void) | null = null;
  let stop: (() => void) | null = null;
  let done = false;
  const flush = () => {
    if (!waiting || !queue.length) return;
    const w = waiting;
    waiting = null;
    w({ value: Buffer.from(queue.splice(0).join(''), 'utf8'), done: false });
  };
  const it: AsyncIterableIterator<Uint8Array> = {
    [Symbol.asyncIterator]: () => it,
    next() {
      if (done) return Promise.resolve({ value: undefined, done: true });
      stop ??= logger.monitor(level, format, (line) => {
        if (queue.length < MAX_QUEUED_LINES) queue.push(`${line}\n`);
        // Later: the line's own call stack is the logger's caller, not this reader.
        setImmediate(flush);
      });
      return new Promise((resolve) => {
        waiting = resolve;
        flush();
      });
    },
    return() {
      done = true;
      stop?.();
      queue.length = 0;
      const w = waiting;
      waiting = null;
      w?.({ value: undefined, done: true });
      return Promise.resolve({ value: undefined, done: true });
    },
  };
  return it;
}
