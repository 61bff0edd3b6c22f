import type { Backend, LogicalRequest } from '@strongroom/sdk-plugin/host';
import type { LeaseEntry } from '../expiration/index.js';
import { createNamespaceRegistry } from '../namespace/namespaces';
import { createEngineCalls } from './engine-calls';
import type { MountBinding } from './mount-manager';
import { createRouter, newMountEntry } from './mount-table';

// Just after unseal a mount's plugin is still starting: a lease revoked then waits for it rather than failing.
it('a revoke for a mount still starting waits for its plugin, and fails when the plugin does not start', async () => {
  const seen: LogicalRequest[] = [];
  const backend = { handleRequest: async (req: LogicalRequest) => (seen.push(req), null) } as unknown as Backend;
  let started!: () => void;
  const binding = { backend: null, status: 'starting', ready: new Promise<void>((r) => (started = r)) } as unknown as MountBinding;
  const router = createRouter<MountBinding>();
  const entry = newMountEntry('mounts', 'db/', { type: 'database' }, 'root');
  router.add(entry, binding);
  const calls = createEngineCalls({ router, namespaces: createNamespaceRegistry() });
  const lease = { leaseId: 'db/creds/r/abc', mountUuid: entry.uuid, requestPath: 'creds/r', secretType: 'creds', internalData: {}, ttl: 60, issueTime: '' } as unknown as LeaseEntry;

  const revoking = calls.revoker.revokeSecret(lease);
  await new Promise((r) => setImmediate(r));
  expect(seen).toHaveLength(0);
  Object.assign(binding, { backend, status: 'running' });
  started();
  await revoking;
  expect(seen).toMatchObject([{ operation: 'revoke', path: 'creds/r', secret: { leaseId: 'db/creds/r/abc' } }]);

  Object.assign(binding, { backend: null, status: 'failed', ready: Promise.resolve() });
  await expect(calls.revoker.revokeSecret(lease)).rejects.toThrow(/not available/);
});
