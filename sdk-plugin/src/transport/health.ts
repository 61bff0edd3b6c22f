/**
 * The start-up health check every plugin process passes before the core uses
 * it (backend and database plugins alike): the channel becomes ready and the
 * standard gRPC health service reports SERVING for HEALTH_SERVICE_NAME.
 */
import * as grpc from '@grpc/grpc-js';
import { StrongroomError } from '../errors.js';
import { HEALTH_SERVICE_NAME, SECRET_METADATA_KEY } from './handshake.js';
import { CHANNEL_OPTIONS, loadProtos } from './proto.js';

export interface HealthCheckOptions {
  socketPath: string;
  secret: string;
  /** Names the plugin in errors ("kv v0.1.0+builtin"). */
  label: string;
  timeoutMs: number;
}

export async function waitHealthy(opts: HealthCheckOptions): Promise<void> {
  const failed = (detail: string) => new StrongroomError('plugin_failed', `plugin ${opts.label} failed during start: ${detail}`);
  const health = new (loadProtos().Health)(`unix:${opts.socketPath}`, grpc.credentials.createInsecure(), CHANNEL_OPTIONS);
  try {
    const deadline = Date.now() + opts.timeoutMs;
    await new Promise<void>((resolve, reject) =>
      health.waitForReady(deadline, (err) => (err ? reject(failed(`not reachable: ${err.message}`)) : resolve())),
    );
    const md = new grpc.Metadata();
    md.set(SECRET_METADATA_KEY, opts.secret);
    const res = await new Promise<{ status: string | number }>((resolve, reject) => {
      const check = (health as unknown as Record<string, Function>).Check as (
        req: unknown,
        md: grpc.Metadata,
        o: grpc.CallOptions,
        cb: (err: grpc.ServiceError | null, res: { status: string | number }) => void,
      ) => void;
      check.call(health, { service: HEALTH_SERVICE_NAME }, md, { deadline }, (err, r) => {
        if (!err) return resolve(r);
        reject(
          err.code === grpc.status.DEADLINE_EXCEEDED
            ? new StrongroomError('coded', `plugin ${opts.label} did not answer Check within ${opts.timeoutMs} ms`, { status: 504 })
            : failed(err.details || err.message),
        );
      });
    });
    if (res.status !== 'SERVING' && res.status !== 1) throw failed(`health check says ${String(res.status)}`);
  } finally {
    health.close();
  }
}
