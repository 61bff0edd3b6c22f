/**
 * The transport to a database plugin that runs in the caller's own process:
 * the database engine's built-in plugins (DESIGN §3). The same request and
 * reply frames as a plugin process's stream, handed to the same dispatcher
 * that process would run (dispatch.ts), so the client above
 * (client.ts `createDatabaseClient`) cannot tell the two apart.
 *
 * What must stay true, as over the stream:
 *  - a failure is an error reply, never a throw into the caller's event loop:
 *    every error crosses encodeError/decodeError, so a driver's untyped error
 *    (its text may hold credentials) arrives as a bare "internal error";
 *  - every call has a deadline (a hung driver is a 504, not a hung request).
 */
import { StrongroomError } from '../errors.js';
import { decodeError, encodeError } from '../transport/codec.js';
import type { DatabaseTransport } from './client.js';
import { createDatabaseDispatcher } from './dispatch.js';
import type { DatabasePlugin } from './types.js';

export interface InProcessDatabaseTransport extends DatabaseTransport {
  /** Closes every connection's instance (the mount is going). */
  closeAll(): Promise<void>;
}

export function createInProcessDatabaseTransport(
  plugin: DatabasePlugin,
  opts: { label: string; logger: { error(msg: string, meta?: Record<string, unknown>): void } },
): InProcessDatabaseTransport {
  const dispatcher = createDatabaseDispatcher(plugin, opts.logger);
  return {
    async call(kind, body, timeoutMs, fields) {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new StrongroomError('coded', `${opts.label} did not answer ${kind} within ${timeoutMs} ms`, { status: 504 })), timeoutMs);
      });
      try {
        const [replyKind, reply] = await Promise.race([dispatcher.handle({ ...fields, id: 0, kind, [kind]: body }), deadline]);
        return { id: 0, kind: replyKind, [replyKind]: reply };
      } catch (err) {
        throw decodeError(encodeError(err));
      } finally {
        clearTimeout(timer);
      }
    },
    type: async () => plugin.type,
    closeAll: () => dispatcher.closeAll(),
  };
}
