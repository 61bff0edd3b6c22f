/**
 * A plugin's storage batch end to end on the core's side: the SDK's callback
 * client -> the callback server -> the mount's view -> the barrier's batch ->
 * physical storage wrapped in the fault injector. A batch that fails at the
 * storage leaves none of its writes, through the barrier and on disk alike.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { createCallbackClient, createCallbackServer, createRecordStore, type SystemView } from '@strongroom/sdk-plugin/host';
import { createBarrier } from '../barrier/barrier.js';
import { createFaultyStore } from '@strongroom/sdk-plugin/host';
import { createInmemPhysical } from './inmem.js';
import { createView } from './view.js';

const system = {} as SystemView;

describe('storage batch through the plugin wire', () => {
  let dir: string;
  let server: ReturnType<typeof createCallbackServer>;
  let client: ReturnType<typeof createCallbackClient>;
  const physical = createFaultyStore(createInmemPhysical());
  const barrier = createBarrier(physical);
  const view = createView(barrier, 'logical/m1/');

  beforeAll(async () => {
    const key = randomBytes(32);
    await barrier.initialize(key);
    await barrier.unseal(key);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sr-batch-'));
    const socketPath = path.join(dir, 'core.sock');
    server = createCallbackServer({ socketPath, secret: () => Buffer.from('s'), resolve: (uuid) => (uuid === 'm1' ? { storage: view, system } : null) });
    await server.start();
    client = createCallbackClient({ socketPath, secret: 's' });
  });
  afterAll(async () => {
    client.close();
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('applies puts and deletes together, encrypted under the mount prefix', async () => {
    const store = createRecordStore(client.storage('m1'));
    const roles = store.kind('role/', z.object({ name: z.string() }));
    const index = store.kind('role_id/', z.object({ name: z.string() }));
    await store.batch([roles.putOp('web', { name: 'web' }), index.putOp('h1', { name: 'web' })]);
    expect(await view.get('role/web')).not.toBeNull();
    expect(await view.get('role_id/h1')).not.toBeNull();
    const raw = await physical.get('logical/m1/role/web');
    expect(Buffer.from(raw!).toString('latin1')).not.toContain('"web"');
    await store.batch([index.deleteOp('h1'), index.putOp('h2', { name: 'web' })]);
    expect(await view.get('role_id/h1')).toBeNull();
    expect(await index.get('h2')).toEqual({ name: 'web' });
  });

  it('a batch the storage fails leaves no part of it behind', async () => {
    const store = createRecordStore(client.storage('m1'));
    const roles = store.kind('role/', z.object({ name: z.string() }));
    const index = store.kind('role_id/', z.object({ name: z.string() }));
    physical.faults.failNext(1, 'batch');
    await expect(store.batch([roles.putOp('api', { name: 'api' }), index.putOp('h3', { name: 'api' }), index.deleteOp('h2')])).rejects.toThrow();
    expect(physical.faults.injected).toBe(1);
    expect(await physical.get('logical/m1/role/api')).toBeNull();
    expect(await physical.get('logical/m1/role_id/h3')).toBeNull();
    expect(await index.get('h2')).toEqual({ name: 'web' });
  });

  it('refuses a batch larger than the limit, and another mount', async () => {
    const ops = Array.from({ length: 1001 }, (_, i) => ({ type: 'delete' as const, key: `k${i}` }));
    await expect(client.storage('m1').batch(ops)).rejects.toThrow('at most 1000');
    await expect(client.storage('m2').batch([{ type: 'delete', key: 'x' }])).rejects.toThrow('not served');
  });
});
