/** sys/seal, sys/step-down, sys/rotate, sys/key-status, sys/leader and sys/metrics. */
import { definePath, f, hashToolPath, randomToolPath, type PathDef } from '@strongroom/sdk-plugin';
import type { SysDeps } from './deps.js';

export function adminPaths(deps: SysDeps): PathDef[] {
  return [
    // The same endpoints as transit's hash and random (one definition, in the SDK).
    hashToolPath('tools/hash{/:algorithm}'),
    randomToolPath('tools/random{/:source}{/:urlbytes}'),
    definePath({
      pattern: 'seal',
      synopsis: 'Seal the server: every key is dropped from memory.',
      operations: { update: { summary: 'Seal.', handler: async () => (await deps.seal(), null) } },
    }),
    definePath({
      pattern: 'step-down',
      synopsis: 'Give up the active role (single node: no effect).',
      operations: { update: { summary: 'Step down.', handler: async () => null } },
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
      pattern: 'leader',
      synopsis: 'High-availability status of this node.',
      unauthenticated: true,
      operations: {
        read: {
          summary: 'Leader information.',
          // As Vault answers it: the object itself, outside the envelope (hvac reads `is_self` at the top).
          handler: async () => ({
            raw: {
              status: 200,
              contentType: 'application/json',
              body: JSON.stringify({
              ha_enabled: false,
              is_self: true,
              active_time: '0001-01-01T00:00:00Z',
              leader_address: deps.node.apiAddr,
              leader_cluster_address: '',
              performance_standby: false,
              performance_standby_last_remote_wal: 0,
              }),
            },
          }),
        },
      },
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
