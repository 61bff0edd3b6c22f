/**
 * Change events (issue 32) through the real binary and the real kv, transit
 * and lease-test plugin processes: sys/events/subscribe as server-sent events
 * and WebSocket frames, filtered by the subscriber's ACL at delivery and by
 * namespace, resumed with Last-Event-ID, a stalled subscriber told what it
 * lost while the writer goes on, and a revoked token's stream ended.
 */
import { spawn } from 'node:child_process';
import WebSocket from 'ws';
import { subscribeSse, type SseSubscription } from '../helpers/events';
import { startLeaseServer, type LeaseServer } from '../helpers/lease-plugin';
import { waitFor } from '../helpers/processes';
import { BIN, startDevServer, type RunningServer } from '../helpers/server';

jest.setTimeout(180_000);

const kvPaths = (s: SseSubscription) => s.events().filter((e) => e.event_type.startsWith('kv-v2/')).map((e) => `${e.event_type} ${e.path}`);

async function tokenWith(s: RunningServer, policy: string, body: string, opts: { namespace?: string } = {}): Promise<string> {
  const headers = opts.namespace ? { 'X-Vault-Namespace': opts.namespace } : {};
  expect((await s.api('PUT', `sys/policies/acl/${policy}`, { policy: body }, { headers })).status).toBe(204);
  const t = await s.api('POST', 'auth/token/create', { policies: [policy], ttl: '1h' }, { headers });
  expect(t.status).toBe(200);
  return t.body.auth.client_token;
}

describe('change events on a dev server', () => {
  let s: RunningServer;
  const open: SseSubscription[] = [];
  const sub = async (...args: Parameters<typeof subscribeSse>) => {
    const x = await subscribeSse(...args);
    open.push(x);
    return x;
  };
  beforeAll(async () => {
    s = await startDevServer();
  });
  afterEach(() => {
    for (const x of open.splice(0)) x.close();
  });

  it('delivers kv writes and deletes only where the subscriber may read', async () => {
    const token = await tokenWith(s, 'app-events', 'path "sys/events/subscribe/*" { capabilities = ["read"] }\npath "secret/data/app/*" { capabilities = ["read"] }');
    const mine = await sub(s.url, 'kv-v2/*', { token });
    const all = await sub(s.url, 'kv-v2/data-*', { token: s.rootToken });
    expect(mine.status).toBe(200);
    expect(all.status).toBe(200);
    expect((await s.api('POST', 'secret/data/other', { data: { v: 'secret-value-1' } })).status).toBe(200);
    expect((await s.api('POST', 'secret/data/app/x', { data: { v: 'secret-value-2' } })).status).toBe(200);
    expect((await s.api('DELETE', 'secret/data/app/x')).status).toBe(204);
    expect((await s.api('POST', 'secret/undelete/app/x', { versions: [1] })).status).toBe(204);
    expect((await s.api('POST', 'secret/destroy/app/x', { versions: [1] })).status).toBe(204);
    expect((await s.api('POST', 'secret/data/other', { data: { v: 'secret-value-3' } })).status).toBe(200);
    // A subscriber's events come in order: once it has the last write, it has seen (or skipped) the rest.
    expect((await s.api('POST', 'secret/data/app/zz-last', { data: { v: 'x' } })).status).toBe(200);
    await mine.waitForEvent((e) => e.path === 'secret/data/app/zz-last', 'the restricted subscriber to see the last write');
    await all.waitForEvent((e) => e.path === 'secret/data/app/zz-last', 'root to see the last write');
    expect(kvPaths(mine)).toEqual([
      'kv-v2/data-write secret/data/app/x',
      'kv-v2/data-delete secret/data/app/x',
      'kv-v2/undelete secret/data/app/x',
      'kv-v2/destroy secret/data/app/x',
      'kv-v2/data-write secret/data/app/zz-last',
    ]);
    expect(kvPaths(all)).toEqual([
      'kv-v2/data-write secret/data/other',
      'kv-v2/data-write secret/data/app/x',
      'kv-v2/data-delete secret/data/app/x',
      'kv-v2/data-write secret/data/other',
      'kv-v2/data-write secret/data/app/zz-last',
    ]);
    const write = mine.events()[0];
    expect(write).toEqual({ id: expect.any(String), event_type: 'kv-v2/data-write', time: expect.any(String), namespace: '', mount: 'secret/', path: 'secret/data/app/x', metadata: { version: 1 } });
    expect(Number.isNaN(Date.parse(write.time))).toBe(false);
    // Never a value: the secret's data is nowhere in the stream.
    expect(JSON.stringify(all.frames)).not.toContain('secret-value');
    // Core events need more than a kv policy: the restricted token saw no policy/write of its own policy.
    expect(mine.events().some((e) => e.event_type.startsWith('policy/'))).toBe(false);
  });

  it('asks the ACL at delivery: a policy changed mid-stream changes what arrives', async () => {
    const both = 'path "sys/events/subscribe/*" { capabilities = ["read"] }\npath "secret/data/live/*" { capabilities = ["read"] }\npath "secret/data/zz/*" { capabilities = ["list"] }';
    const token = await tokenWith(s, 'changing', both);
    const x = await sub(s.url, 'kv-v2/data-write', { token });
    expect((await s.api('POST', 'secret/data/live/1', { data: { v: 1 } })).status).toBe(200);
    await x.waitForEvent((e) => e.path === 'secret/data/live/1');
    // The token's policy loses secret/data/live/*: the stream goes on, without those events.
    expect((await s.api('PUT', 'sys/policies/acl/changing', { policy: 'path "sys/events/subscribe/*" { capabilities = ["read"] }\npath "secret/data/zz/*" { capabilities = ["list"] }' })).status).toBe(204);
    expect((await s.api('POST', 'secret/data/live/2', { data: { v: 2 } })).status).toBe(200);
    expect((await s.api('POST', 'secret/data/zz/end', { data: { v: 3 } })).status).toBe(200);
    await x.waitForEvent((e) => e.path === 'secret/data/zz/end', 'the last write (list is enough)');
    expect(x.events().map((e) => e.path)).toEqual(['secret/data/live/1', 'secret/data/zz/end']);
  });

  it('refuses a subscription without read on sys/events/subscribe/<type>', async () => {
    const token = await tokenWith(s, 'kv-only', 'path "secret/data/*" { capabilities = ["read"] }\npath "sys/events/subscribe/transit/*" { capabilities = ["read"] }');
    expect((await sub(s.url, 'kv-v2/data-write', { token })).status).toBe(403);
    expect((await sub(s.url, 'transit/key-rotate', { token })).status).toBe(200);
    expect((await sub(s.url, 'kv-v2/data-write', { token: 'not-a-token' })).status).toBe(403);
    expect((await sub(s.url, 'bad%20type', { token: s.rootToken })).status).toBe(400);
  });

  it('core events: policy writes for a reader of the policy, mount changes only with sudo on sys/leases/lookup', async () => {
    const reader = await tokenWith(s, 'policy-reader', 'path "sys/events/subscribe/*" { capabilities = ["read"] }\npath "sys/policies/acl/*" { capabilities = ["read"] }\npath "sys/leases/lookup/*" { capabilities = ["list"] }');
    const r = await sub(s.url, '*', { token: reader });
    const root = await sub(s.url, '*', { token: s.rootToken });
    expect((await s.api('POST', 'sys/mounts/transit-ev', { type: 'transit' })).status).toBe(204);
    expect((await s.api('POST', 'transit-ev/keys/k1', {})).status).toBe(204);
    expect((await s.api('POST', 'transit-ev/keys/k1/rotate', {})).status).toBe(204);
    expect((await s.api('PUT', 'sys/policies/acl/zz-marker', { policy: 'path "x" { capabilities = ["read"] }' })).status).toBe(204);
    await root.waitForEvent((e) => e.event_type === 'policy/write' && e.path === 'sys/policies/acl/zz-marker', 'root to see the marker policy');
    await r.waitForEvent((e) => e.event_type === 'policy/write' && e.path === 'sys/policies/acl/zz-marker', 'the reader to see the marker policy');
    expect(root.events().map((e) => e.event_type)).toEqual(['mount/enable', 'transit/key-rotate', 'policy/write']);
    expect(root.events()[0]).toMatchObject({ mount: 'sys/', path: 'transit-ev/', metadata: { type: 'transit' } });
    expect(root.events()[1]).toMatchObject({ mount: 'transit-ev/', path: 'transit-ev/keys/k1', metadata: { name: 'k1', version: 2 } });
    // No sudo on sys/leases/lookup (list only), no read on transit-ev/keys: only the policy event.
    expect(r.events().map((e) => e.event_type)).toEqual(['policy/write']);
    expect((await s.api('DELETE', 'sys/mounts/transit-ev')).status).toBe(204);
    await root.waitForEvent((e) => e.event_type === 'mount/disable' && e.path === 'transit-ev/', 'mount/disable');
    expect((await s.api('DELETE', 'sys/policies/acl/zz-marker')).status).toBe(204);
    await r.waitForEvent((e) => e.event_type === 'policy/delete' && e.path === 'sys/policies/acl/zz-marker', 'policy/delete');
  });

  it('a child namespace subscriber sees nothing of its parent; the parent chooses children with namespaces=', async () => {
    expect((await s.api('POST', 'sys/namespaces/team-a', {})).status).toBe(200);
    const ns = { headers: { 'X-Vault-Namespace': 'team-a' } };
    expect((await s.api('POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } }, ns)).status).toBe(204);
    const child = await tokenWith(s, 'everything', 'path "*" { capabilities = ["read", "list"] }', { namespace: 'team-a' });
    const inChild = await sub(s.url, 'kv-v2/*', { token: child, namespace: 'team-a' });
    const rootOnly = await sub(s.url, 'kv-v2/*', { token: s.rootToken });
    const rootAndChildren = await sub(s.url, 'kv-v2/*', { token: s.rootToken, query: 'namespaces=team-*' });
    expect(inChild.status).toBe(200);
    expect((await s.api('POST', 'secret/data/parent-secret', { data: { v: 1 } })).status).toBe(200);
    expect((await s.api('POST', 'secret/data/child-secret', { data: { v: 1 } }, ns)).status).toBe(200);
    expect((await s.api('POST', 'secret/data/zz-parent-last', { data: { v: 1 } })).status).toBe(200);
    await inChild.waitForEvent((e) => e.path === 'secret/data/child-secret', 'the child subscriber to see its write');
    await rootAndChildren.waitForEvent((e) => e.path === 'secret/data/zz-parent-last', 'root (with children) to see the last write');
    await rootOnly.waitForEvent((e) => e.path === 'secret/data/zz-parent-last', 'root to see the last write');
    expect(inChild.events().map((e) => `${e.namespace} ${e.path}`)).toEqual(['team-a/ secret/data/child-secret']);
    expect(rootOnly.events().map((e) => `${e.namespace} ${e.path}`)).toEqual([' secret/data/parent-secret', ' secret/data/zz-parent-last']);
    expect(rootAndChildren.events().map((e) => `${e.namespace} ${e.path}`)).toEqual([' secret/data/parent-secret', 'team-a/ secret/data/child-secret', ' secret/data/zz-parent-last']);
    // The child's token cannot reach above its namespace at all.
    expect((await sub(s.url, 'kv-v2/*', { token: child })).status).toBe(403);
  });

  it('Last-Event-ID resumes without a gap, and says when it cannot', async () => {
    const first = await sub(s.url, 'kv-v2/data-write', { token: s.rootToken });
    for (let i = 1; i <= 3; i++) expect((await s.api('POST', `secret/data/resume/${i}`, { data: { i } })).status).toBe(200);
    await first.waitForEvent((e) => e.path === 'secret/data/resume/3');
    const lastSeen = first.frames.filter((f) => !f.name).at(-1)!.id!;
    first.close();
    await first.ended;
    for (let i = 4; i <= 6; i++) expect((await s.api('POST', `secret/data/resume/${i}`, { data: { i } })).status).toBe(200);
    const resumed = await sub(s.url, 'kv-v2/data-write', { token: s.rootToken, lastEventId: lastSeen });
    expect((await s.api('POST', 'secret/data/resume/7', { data: { i: 7 } })).status).toBe(200);
    await resumed.waitForEvent((e) => e.path === 'secret/data/resume/7');
    expect(resumed.frames.filter((f) => f.name)).toEqual([]);
    expect(resumed.events().map((e) => e.path)).toEqual([4, 5, 6, 7].map((i) => `secret/data/resume/${i}`));
    // Ids increase along the stream: the resumed ones follow the last seen.
    expect(resumed.frames[0]!.id).not.toBe(lastSeen);

    // An id this server never issued (another process's, or too old): a gap notice, then what the log has.
    const unknown = await sub(s.url, 'kv-v2/data-write', { token: s.rootToken, lastEventId: '0123456789ab-5' });
    await waitFor('the gap notice', () => unknown.frames.find((f) => f.name === 'gap'));
    expect(unknown.frames[0]).toMatchObject({ name: 'gap', data: { event_type: 'gap', last_event_id: '0123456789ab-5', reason: expect.any(String) } });
  });

  it('streams WebSocket frames on an upgrade, and refuses one without the right token', async () => {
    const wsUrl = `${s.url.replace('http', 'ws')}/v1/sys/events/subscribe/kv-v2/data-write`;
    const ws = new WebSocket(wsUrl, { headers: { 'X-Vault-Token': s.rootToken } });
    const got: any[] = [];
    ws.on('message', (d) => got.push(JSON.parse(String(d))));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    expect((await s.api('POST', 'secret/data/ws/one', { data: { v: 1 } })).status).toBe(200);
    await waitFor('a WebSocket frame', () => got.find((e) => e.path === 'secret/data/ws/one'));
    expect(got[0]).toMatchObject({ event_type: 'kv-v2/data-write', path: 'secret/data/ws/one', metadata: { version: 1 } });
    ws.close();

    const refused = new WebSocket(wsUrl, { headers: { 'X-Vault-Token': 'wrong' } });
    const status = await new Promise<number>((resolve) => {
      refused.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      refused.once('open', () => resolve(101));
      refused.once('error', () => resolve(-1));
    });
    expect(status).toBe(403);
  });

  it('the CLI prints one JSON line per event', async () => {
    const cli = spawn(process.execPath, [BIN, 'events', 'subscribe', 'kv-v2/data-*'], { env: { ...process.env, STRONGROOM_ADDR: s.url, STRONGROOM_TOKEN: s.rootToken }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    cli.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    cli.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    try {
      // The subscription is open once a write shows up; keep writing until one does.
      await waitFor('the CLI to print an event', async () => {
        await s.api('POST', 'secret/data/cli/one', { data: { v: 1 } });
        return out.includes('secret/data/cli/one');
      }, 30_000);
      expect((await s.api('DELETE', 'secret/data/cli/one')).status).toBe(204);
      await waitFor('the delete line', () => out.includes('kv-v2/data-delete'));
      const lines = out.trim().split('\n').map((l) => JSON.parse(l));
      expect(lines.every((e) => e.path === 'secret/data/cli/one' && typeof e.id === 'string')).toBe(true);
      expect(lines.at(-1)).toMatchObject({ event_type: 'kv-v2/data-delete' });
    } finally {
      cli.kill('SIGTERM');
    }
  });

  it('ends the stream of a token that is revoked', async () => {
    const token = await tokenWith(s, 'revoked-sub', 'path "sys/events/subscribe/*" { capabilities = ["read"] }\npath "secret/*" { capabilities = ["read"] }');
    const x = await sub(s.url, 'kv-v2/*', { token });
    expect((await s.api('POST', 'secret/data/before-revoke', { data: { v: 1 } })).status).toBe(200);
    await x.waitForEvent((e) => e.path === 'secret/data/before-revoke');
    expect((await s.api('POST', 'auth/token/revoke', { token })).status).toBe(204);
    await x.ended;
    expect(x.frames.at(-1)).toMatchObject({ name: 'end', data: { event_type: 'end' } });
  });

  it('ends the stream of a token that expires', async () => {
    expect((await s.api('PUT', 'sys/policies/acl/short-sub', { policy: 'path "sys/events/subscribe/*" { capabilities = ["read"] }' })).status).toBe(204);
    const token = (await s.api('POST', 'auth/token/create', { policies: ['short-sub'], ttl: '3s' })).body.auth.client_token as string;
    const x = await sub(s.url, '*', { token });
    expect(x.status).toBe(200);
    await x.ended;
    expect(x.frames.at(-1)).toMatchObject({ name: 'end' });
  });

  it('kv version 1 writes and deletes are events too', async () => {
    expect((await s.api('POST', 'sys/mounts/kv1', { type: 'kv', options: { version: '1' } })).status).toBe(204);
    const x = await sub(s.url, 'kv-v1/*', { token: s.rootToken });
    expect((await s.api('POST', 'kv1/app/one', { password: 'never-in-an-event' })).status).toBe(204);
    expect((await s.api('DELETE', 'kv1/app/one')).status).toBe(204);
    await x.waitForEvent((e) => e.event_type === 'kv-v1/delete');
    expect(x.events().map((e) => `${e.event_type} ${e.mount} ${e.path}`)).toEqual(['kv-v1/write kv1/ kv1/app/one', 'kv-v1/delete kv1/ kv1/app/one']);
    expect(JSON.stringify(x.frames)).not.toContain('never-in-an-event');
  });
});

describe('change events with a small subscriber buffer (a config server) and leases', () => {
  let s: LeaseServer;
  beforeAll(async () => {
    s = await startLeaseServer({ extraConfig: 'events {\n  subscriber_buffer = 8\n}\n' });
    expect((await s.api('POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } })).status).toBe(204);
  });

  it('a stalled subscriber gets dropped notices while the writer is not held back', async () => {
    // A WebSocket subscriber that stops reading (its socket paused): it acknowledges nothing more,
    // so after the server's window its queue fills and what does not fit is dropped and counted.
    const wsUrl = `${s.url.replace('http', 'ws')}/v1/sys/events/subscribe/kv-v2/data-write`;
    const stalled = new WebSocket(wsUrl, { headers: { 'X-Vault-Token': s.rootToken } });
    const got: any[] = [];
    stalled.on('message', (d) => got.push(JSON.parse(String(d))));
    await new Promise<void>((resolve, reject) => {
      stalled.once('open', () => resolve());
      stalled.once('error', reject);
    });
    stalled.pause();
    const live = await subscribeSse(s.url, 'kv-v2/data-write', { token: s.rootToken });

    const N = 250;
    // Long paths: the window fills with fewer writes.
    const long = 'p'.repeat(900);
    let next = 0;
    const statuses: number[] = [];
    const writer = async () => {
      while (next < N) {
        const i = next++;
        statuses.push((await s.api('POST', `secret/data/stall/${long}/${i}`, { data: { i } })).status);
      }
    };
    await Promise.all(Array.from({ length: 8 }, writer));
    expect(statuses.filter((x) => x !== 200)).toEqual([]);
    // A subscriber that reads got every write: the stalled one held nobody back.
    await waitFor('the live subscriber to get every write', () => live.events().length >= N, 60_000);
    expect(live.frames.filter((f) => f.name === 'dropped')).toEqual([]);

    // The stalled subscriber's queue never grew past its buffer (8); what did not fit was dropped and counted.
    const metrics = (await s.api('GET', 'sys/metrics?format=prometheus')).text;
    const metric = (name: string) => Number(new RegExp(`^strongroom_${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(metrics)?.[1] ?? NaN);
    expect(metric('events_subscriber_queue_max')).toBeLessThanOrEqual(8);
    expect(metric('events_dropped_total')).toBeGreaterThan(0);

    // Reading again: the events that fit, then a dropped notice for the rest; together every write.
    stalled.resume();
    const tally = () => {
      const events = got.filter((e) => e.event_type === 'kv-v2/data-write').length;
      const notices = got.filter((e) => e.event_type === 'dropped');
      return { events, dropped: notices.reduce((n, e) => n + e.count, 0), notices };
    };
    const final = await waitFor('the stalled subscriber to account for every write', () => {
      const c = tally();
      return c.events + c.dropped === N ? c : undefined;
    }, 60_000);
    expect(final.dropped).toBeGreaterThan(0);
    expect(final.events).toBeLessThan(N);
    expect(final.notices[0]).toEqual({ event_type: 'dropped', count: expect.any(Number), first_id: expect.any(String), last_id: expect.any(String) });
    stalled.close();
    live.close();
  });

  it('lease events: issue, revoke and expire, for a token with sudo on sys/leases/lookup', async () => {
    const token = await tokenWith(s, 'lease-watcher', 'path "sys/events/subscribe/lease/*" { capabilities = ["read"] }\npath "sys/leases/lookup/lt/*" { capabilities = ["list", "sudo"] }');
    const noSudo = await tokenWith(s, 'lease-peeker', 'path "sys/events/subscribe/lease/*" { capabilities = ["read"] }\npath "sys/leases/lookup/lt/*" { capabilities = ["list"] }');
    const w = await subscribeSse(s.url, 'lease/*', { token });
    const peek = await subscribeSse(s.url, 'lease/*', { token: noSudo });
    expect((await s.api('POST', 'lt/roles/short', { ttl: '2s', record: false })).status).toBe(204);
    expect((await s.api('POST', 'lt/roles/long', { ttl: '1h', record: false })).status).toBe(204);
    const short = (await s.api('GET', 'lt/creds/short')).body.lease_id as string;
    const long = (await s.api('GET', 'lt/creds/long')).body.lease_id as string;
    expect((await s.api('POST', 'sys/leases/revoke', { lease_id: long })).status).toBe(204);
    await w.waitForEvent((e) => e.event_type === 'lease/expire' && e.path === short, 'the short lease to expire', 60_000);
    await w.waitForEvent((e) => e.event_type === 'lease/revoke' && e.path === long, 'the long lease revocation');
    expect(w.events().filter((e) => e.event_type === 'lease/issue').map((e) => e.path)).toEqual([short, long]);
    expect(w.events()[0]).toMatchObject({ mount: 'lt/', metadata: { lease_id: short, ttl: 2 } });
    expect(peek.events()).toEqual([]);
    w.close();
    peek.close();
  });
});
