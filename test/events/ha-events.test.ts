/**
 * Change events on an HA cluster: two real nodes on one PostgreSQL database
 * (ha_enabled). A subscriber connected to the standby gets what the active
 * node publishes, over SSE and WebSocket, filtered by its ACL as on the
 * active node, and resumes there with Last-Event-ID; when the active node
 * dies the relayed stream ends and the new active node answers the old id
 * with a gap notice.
 */
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import WebSocket from 'ws';
import { haPostgresConfig, postgresUrl } from '../helpers/databases';
import { subscribeSse, type SseSubscription } from '../helpers/events';
import { waitFor } from '../helpers/processes';
import { startConfigServer, type RunningServer } from '../helpers/server';

jest.setTimeout(240_000);

const dbName = `sr_events_${randomBytes(4).toString('hex')}`;
const nodes: RunningServer[] = [];
const open: SseSubscription[] = [];

async function admin(sql: string): Promise<void> {
  const c = new Client({ connectionString: postgresUrl() });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

beforeAll(async () => {
  await admin(`CREATE DATABASE ${dbName}`);
  const url = new URL(postgresUrl());
  url.pathname = `/${dbName}`;
  const config = haPostgresConfig({ url: url.toString() });
  nodes.push(await startConfigServer(config));
  // The node answers before its connection to PostgreSQL is up (503 until then).
  const init = await waitFor('init', async () => {
    const r = await nodes[0]!.api('PUT', 'sys/init', { secret_shares: 1, secret_threshold: 1 }, { token: null });
    if (r.status !== 200 && r.status !== 503) throw new Error(`init: ${r.status} ${r.text}`);
    return r.status === 200 ? r : undefined;
  }, 60_000);
  nodes.push(await startConfigServer(config));
  for (const n of nodes) {
    n.rootToken = init.body.root_token;
    await waitFor('unseal', async () => (await n.api('PUT', 'sys/unseal', { key: init.body.keys_base64[0] }, { token: null })).body?.sealed === false, 60_000);
  }
});

afterAll(async () => {
  for (const x of open) x.close();
  await Promise.all(nodes.map((n) => n.stop('SIGKILL')));
  await admin(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => undefined);
});

it('a subscriber on the standby gets the events published on the active node', async () => {
  const roles = await waitFor('one active node and one standby', async () => {
    const codes = await Promise.all(nodes.map((n) => fetch(`${n.url}/v1/sys/health`).then((r) => r.status, () => 0)));
    const a = codes.indexOf(200);
    const s = codes.indexOf(429);
    return a >= 0 && s >= 0 ? { active: nodes[a]!, standby: nodes[s]! } : undefined;
  }, 60_000);
  const { active, standby } = roles;
  expect((await active.api('POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } })).status).toBe(204);
  expect((await active.api('PUT', 'sys/policies/acl/app-events', { policy: 'path "sys/events/subscribe/*" { capabilities = ["read"] }\npath "secret/data/app/*" { capabilities = ["read"] }' })).status).toBe(204);
  const token = (await active.api('POST', 'auth/token/create', { policies: ['app-events'], ttl: '1h' })).body.auth.client_token as string;

  const onStandby = await subscribeSse(standby.url, 'kv-v2/data-*', { token });
  open.push(onStandby);
  expect(onStandby.status).toBe(200);
  const ws = new WebSocket(`${standby.url.replace('http', 'ws')}/v1/sys/events/subscribe/kv-v2/data-write`, { headers: { 'X-Vault-Token': active.rootToken } });
  const wsGot: any[] = [];
  ws.on('message', (d) => wsGot.push(JSON.parse(String(d))));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });

  expect((await active.api('POST', 'secret/data/other', { data: { v: 1 } })).status).toBe(200);
  expect((await active.api('POST', 'secret/data/app/x', { data: { v: 1 } })).status).toBe(200);
  // A write through the standby is forwarded, and its event comes back the same way.
  expect((await standby.api('DELETE', 'secret/data/app/x')).status).toBe(204);
  await onStandby.waitForEvent((e) => e.event_type === 'kv-v2/data-delete', 'the delete on the standby stream');
  expect(onStandby.events().map((e) => `${e.event_type} ${e.path}`)).toEqual(['kv-v2/data-write secret/data/app/x', 'kv-v2/data-delete secret/data/app/x']);
  await waitFor('both writes over the standby WebSocket', () => wsGot.length >= 2);
  expect(wsGot.map((e) => e.path)).toEqual(['secret/data/other', 'secret/data/app/x']);
  ws.close();

  // Resuming through the standby with the last id replays from the active node's log.
  const last = onStandby.frames.filter((f) => !f.name).at(-1)!.id!;
  onStandby.close();
  expect((await active.api('POST', 'secret/data/app/y', { data: { v: 1 } })).status).toBe(200);
  const resumed = await subscribeSse(standby.url, 'kv-v2/data-*', { token, lastEventId: last });
  open.push(resumed);
  await resumed.waitForEvent((e) => e.path === 'secret/data/app/y', 'the replayed write');
  expect(resumed.frames.map((f) => f.name ?? f.data.path)).toEqual(['secret/data/app/y']);

  // The active node dies: the relayed stream ends; the standby takes over and answers the old id with a gap.
  const lastY = resumed.frames.at(-1)!.id!;
  await active.stop('SIGKILL');
  await resumed.ended;
  await waitFor('the standby to become active', async () => (await fetch(`${standby.url}/v1/sys/health`).then((r) => r.status, () => 0)) === 200, 60_000);
  const after = await subscribeSse(standby.url, 'kv-v2/data-*', { token, lastEventId: lastY });
  open.push(after);
  expect(after.status).toBe(200);
  expect((await standby.api('POST', 'secret/data/app/z', { data: { v: 1 } })).status).toBe(200);
  await after.waitForEvent((e) => e.path === 'secret/data/app/z', 'a write on the new active node');
  expect(after.frames[0]).toMatchObject({ name: 'gap', data: { last_event_id: lastY } });
});
