/** sys/seal, sys/step-down, sys/rotate, sys/key-status and sys/metrics (sys/leader is node-local: core/src/server/core.ts). */
import { definePath, f, type PathDef } from '@strongroom/sdk-plugin';
import type { SysDeps } from './deps.js';

export function adminPaths(deps: SysDeps): PathDef[] {
  return [
    definePath({
      pattern: 'seal',
      synopsis: 'Seal the server: every key is dropped from memory.',
      operations: { update: { summary: 'Seal.', handler: async () => (await deps.seal(), null) } },
    }),
    definePath({
      pattern: 'step-down',
      synopsis: 'Give up the active role: another node of an HA cluster takes over (single node: no effect).',
      operations: { update: { summary: 'Step down.', handler: async () => (await deps.stepDown(), null) } },
    }),
    definePath({
      pattern: 'rotate',
      synopsis: 'Add a new keyring term; new writes use it, old entries stay readable.',
      operations: { update: { summary: 'Rotate the encryption key.', handler: async () => (await deps.rotate(), null) } },
    }),
    definePath({
      pattern: 'key-status',
      synopsis: 'The active keyring term.',
      operations: { read: { summary: 'Key status.', handler: async () => ({ data: deps.keyStatus() }) } },
    }),
    definePath({
      pattern: 'metrics',
      fields: { format: f.query(f.string().optional().describe('"prometheus" for the text format; JSON otherwise.')) },
      synopsis: 'Telemetry of this node.',
      operations: {
        read: {
          summary: 'Metrics.',
          handler: async (req) =>
            req.data.format === 'prometheus'
              ? { raw: { status: 200, contentType: 'text/plain; version=0.0.4', body: deps.metrics.render() } }
              : { data: { metrics: deps.metrics.snapshot() } },
        },
      },
    }),
  ];
}
