/**
 * Snapshots through the real binary, its plugins and the CLI, on LevelDB and
 * on PostgreSQL (the shared server, a table of this test's own): a restore
 * brings back exactly the snapshot's data (kv values, a policy; a token made
 * after it no longer works); a corrupt or truncated file, and another
 * barrier's snapshot without -force, are refused and change nothing; forced,
 * the server seals and the other barrier's key opens it; a server killed
 * (SIGKILL) while applying a restore comes back holding one of the two states
 * whole (LevelDB: the snapshot's, finished at open; PostgreSQL: the old one,
 * the transaction rolled back); scheduled snapshots keep `retain` files; the
 * restored expiration manager holds the snapshot's leases; an upload larger
 * than max_request_size restores (it is streamed).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { cliRunner } from '../helpers/cli';
import { haPostgresConfig, postgresUrl } from '../helpers/databases';
import { records, startLeaseServer } from '../helpers/lease-plugin';
import { levelStorageKeys } from '../helpers/level-keys';
import { restartConfigServer, scratchDir, startConfigServer, type RunningServer } from '../helpers/server';

jest.setTimeout(600_000);

// The format's own reader and writer, from the build under test (a crafted snapshot needs a valid checksum).
const format = require('../../core/dist/storage/snapshot-format.js') as typeof import('../../core/src/storage/snapshot-format');

type Server = RunningServer & { configFile: string };
const LISTENER = 'listener "tcp" {\n  address = "127.0.0.1:$PORT"\n  tls_disable = true\n}\n';

interface Storage {
  name: 'level' | 'postgresql';
  /** A config for a fresh store. */
  config(): string;
  /** How many keys below `prefix` the stopped (or running) server's store holds. */
  count(s: Server, prefix: string): Promise<number>;
  /** Whether the server is in the middle of applying a restore now (seen from outside). */
  applying(s: Server, pg: Client | null): Promise<boolean>;
  /** The state a server killed while applying comes back with. */
  afterKill: 'old' | 'snapshot';
}

async function pgQuery<T>(sql: string, params: unknown[] = []): Promise<T[]> {
  const c = new Client({ connectionString: postgresUrl(), connectionTimeoutMillis: 10_000 });
  await c.connect();
  try {
    return (await c.query(sql, params)).rows as T[];
  } finally {
    await c.end();
  }
}

const tables = new Map<Server, string>();
const STORAGES: Storage[] = [
  {
    name: 'level',
    config: () => `storage "level" {\n  path = "$DIR/data"\n}\n${LISTENER}`,
    count: async (s, prefix) => (await levelStorageKeys(join(s.dataDir, 'data'))).filter((k) => k.startsWith(prefix)).length,
    // The verified file renamed to its ready name decides the restore; it is removed once applied.
    applying: async (s) => existsSync(join(s.dataDir, 'data', 'snapshot-staging', 'restore-ready.snap')),
    afterKill: 'snapshot',
  },
  {
    name: 'postgresql',
    config: () => {
      const t = `snap_${randomBytes(6).toString('hex')}`;
      pendingTable = t;
      return `storage "postgresql" {\n  connection_url = "${postgresUrl()}"\n  table = "${t}"\n  ha_table = "${t}_ha"\n}\n${LISTENER}`;
    },
    count: async (s, prefix) => Number((await pgQuery<{ n: string }>(`SELECT count(*) AS n FROM "${tables.get(s)}" WHERE path LIKE $1`, [`${prefix}%`]))[0]!.n),
    // The restore's transaction: DELETE FROM the table (no WHERE), then INSERTs without ON CONFLICT (a plain put has one).
    applying: async (s, pg) => {
      const t = `"${tables.get(s)}"`;
      const r = await pg!.query(
        `SELECT count(*) AS n FROM pg_stat_activity WHERE state <> 'idle' AND xact_start IS NOT NULL AND (query = $1 OR (query LIKE $2 AND query NOT LIKE '%ON CONFLICT%'))`,
        [`DELETE FROM ${t}`, `INSERT INTO ${t} (path, parent_path, value) VALUES%`],
      );
      return Number(r.rows[0].n) > 0;
    },
    afterKill: 'old',
  },
];
let pendingTable = '';

afterAll(async () => {
  for (const t of tables.values()) await pgQuery(`DROP TABLE IF EXISTS "${t}"; DROP TABLE IF EXISTS "${t}_ha"`).catch(() => undefined);
});

async function unseal(s: Server, key: string): Promise<void> {
  const r = await s.api('POST', 'sys/unseal', { key }, { token: null });
  if (r.body?.sealed !== false) throw new Error(`unseal: ${r.status} ${r.text}`);
}

/** A server on a fresh store, initialized (one share), unsealed, kv v2 at secret/. */
async function fresh(storage: Storage): Promise<Server> {
  const s = await startConfigServer(storage.config());
  if (storage.name === 'postgresql') tables.set(s, pendingTable);
  // PostgreSQL storage answers 503 until its tables are there.
  let init = await s.api('POST', 'sys/init', { secret_shares: 1, secret_threshold: 1 }, { token: null });
  for (let i = 0; init.status === 503 && i < 300; i++) {
    await new Promise((r) => setTimeout(r, 100));
    init = await s.api('POST', 'sys/init', { secret_shares: 1, secret_threshold: 1 }, { token: null });
  }
  expect(init.status).toBe(200);
  s.unsealKey = init.body.keys[0];
  s.rootToken = init.body.root_token;
  await unseal(s, s.unsealKey);
  expect((await s.api('POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } })).status).toBe(204);
  return s;
}

const put = async (s: Server, path: string, data: Record<string, unknown>) => expect((await s.api('POST', `secret/data/${path}`, { data })).status).toBe(200);
const get = async (s: Server, path: string) => {
  const r = await s.api('GET', `secret/data/${path}`);
  return r.status === 200 ? r.body.data.data : r.status;
};
const policy = async (s: Server, name: string) => {
  const r = await s.api('GET', `sys/policies/acl/${name}`);
  return r.status === 200 ? r.body.data.policy : r.status;
};
const tokenWorks = async (s: Server, token: string) => (await s.api('GET', 'auth/token/lookup-self', undefined, { token })).status;
const newToken = async (s: Server) => (await s.api('POST', 'auth/token/create', { policies: ['reader'] })).body.auth.client_token as string;

/** Waits (polling) until the server answers again after a restore. */
async function serving(s: Server): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if ((await s.api('GET', 'sys/mounts')).status === 200) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the server did not serve again');
}

describe.each(STORAGES)('snapshots on $name storage', (storage) => {
  let s: Server;
  let cli: ReturnType<typeof cliRunner>;
  let dir: string;
  let snap: string;
  let earlyToken: string;
  let lateToken: string;

  beforeAll(async () => {
    s = await fresh(storage);
    cli = cliRunner({ addr: s.url, token: s.rootToken });
    dir = scratchDir('sr-snap-');
    snap = join(dir, 'one.snap');
  });

  it('save, write more, restore: the data is exactly the snapshot\'s, and the server serves on', async () => {
    await put(s, 'app', { password: 'plain-secret-v1' });
    await put(s, 'keep', { n: '1' });
    expect((await s.api('PUT', 'sys/policies/acl/reader', { policy: 'path "secret/data/app" { capabilities = ["read"] }' })).status).toBe(204);
    earlyToken = await newToken(s);

    const help = await cli.run(['operator', '-h']);
    expect(help.stdout).toMatch(/snapshot restore +Replace the whole store/);
    expect(help.stdout).toMatch(/snapshot save +Save a point-in-time snapshot/);

    const saved = await cli.run(['operator', 'snapshot', 'save', snap]);
    expect(saved).toMatchObject({ code: 0 });
    expect(saved.stdout).toContain('Success! Snapshot saved');
    const bytes = readFileSync(snap);
    expect(bytes.subarray(0, 8).toString('latin1')).toBe('SRSNAP01');
    // Still barrier-encrypted: the secret values appear nowhere in the file.
    expect(bytes.includes(Buffer.from('plain-secret-v1'))).toBe(false);
    expect((await format.verifySnapshotFile(snap)).count).toBeGreaterThan(10);

    await put(s, 'app', { password: 'plain-secret-v2' });
    await put(s, 'later', { n: '2' });
    expect((await s.api('PUT', 'sys/policies/acl/reader', { policy: 'path "secret/*" { capabilities = ["read", "list"] }' })).status).toBe(204);
    expect((await s.api('PUT', 'sys/policies/acl/late', { policy: 'path "x" { capabilities = ["read"] }' })).status).toBe(204);
    lateToken = await newToken(s);
    expect(await tokenWorks(s, lateToken)).toBe(200);

    const restored = await cli.run(['operator', 'snapshot', 'restore', snap]);
    expect(restored).toMatchObject({ code: 0 });
    expect(restored.stdout).toContain('Success! Snapshot restored');

    // This barrier's snapshot: the state is reloaded, the server stays unsealed with its keys.
    expect((await s.api('GET', 'sys/seal-status', undefined, { token: null })).body.sealed).toBe(false);
    expect(await get(s, 'app')).toEqual({ password: 'plain-secret-v1' });
    expect(await get(s, 'keep')).toEqual({ n: '1' });
    expect(await get(s, 'later')).toBe(404);
    expect((await s.api('GET', 'secret/metadata/app')).body.data.current_version).toBe(1);
    expect(await policy(s, 'reader')).toBe('path "secret/data/app" { capabilities = ["read"] }');
    expect(await policy(s, 'late')).toBe(404);
    expect(await tokenWorks(s, earlyToken)).toBe(200);
    expect(await tokenWorks(s, lateToken)).toBe(403);
    // The engines run again over the restored data: writes work.
    await put(s, 'after', { n: '3' });
    expect(await get(s, 'after')).toEqual({ n: '3' });
    // And the current unseal key still opens it after a seal.
    expect((await s.api('PUT', 'sys/seal')).status).toBe(204);
    await unseal(s, s.unsealKey);
    await serving(s);
    expect(await get(s, 'app')).toEqual({ password: 'plain-secret-v1' });
  });

  it('refuses a corrupt and a truncated file, changing nothing', async () => {
    const good = readFileSync(snap);
    const corrupt = Buffer.from(good);
    corrupt[Math.floor(corrupt.length / 2)]! ^= 0xff;
    writeFileSync(join(dir, 'corrupt.snap'), corrupt);
    writeFileSync(join(dir, 'truncated.snap'), good.subarray(0, good.length - 100));
    writeFileSync(join(dir, 'garbage.snap'), randomBytes(5000));

    for (const [file, why] of [['corrupt.snap', /checksum|corrupt/], ['truncated.snap', /truncated/], ['garbage.snap', /not a Strongroom snapshot/]] as const) {
      const r = await cli.run(['operator', 'snapshot', 'restore', join(dir, file)]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(why);
      expect(r.stderr).toContain('nothing was changed');
      expect(await get(s, 'after')).toEqual({ n: '3' });
    }
    // The same through the API: a 400.
    const api = await fetch(`${s.url}/v1/sys/storage/snapshot-restore`, { method: 'POST', headers: { 'X-Service-Token': s.rootToken }, body: good.subarray(0, 50) });
    expect(api.status).toBe(400);
    expect(await get(s, 'after')).toEqual({ n: '3' });
  });

  it('needs sudo: a token without it gets 403 on both paths', async () => {
    expect((await s.api('PUT', 'sys/policies/acl/snapper', { policy: 'path "sys/storage/*" { capabilities = ["read", "update", "create"] }' })).status).toBe(204);
    const t = (await s.api('POST', 'auth/token/create', { policies: ['snapper'] })).body.auth.client_token as string;
    expect((await s.api('GET', 'sys/storage/snapshot', undefined, { token: t })).status).toBe(403);
    expect((await fetch(`${s.url}/v1/sys/storage/snapshot-restore`, { method: 'POST', headers: { 'X-Service-Token': t }, body: readFileSync(snap) })).status).toBe(403);
    expect(await get(s, 'after')).toEqual({ n: '3' });
  });

  it("refuses another barrier's snapshot unless forced; forced, the server seals and that barrier's key opens it", async () => {
    const other = await fresh(storage);
    await put(other, 'app', { password: 'other' });
    const otherSnap = join(dir, 'other.snap');
    expect((await cliRunner({ addr: other.url, token: other.rootToken }).run(['operator', 'snapshot', 'save', otherSnap])).code).toBe(0);
    await other.stop();

    const refused = await cli.run(['operator', 'snapshot', 'restore', otherSnap]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('another barrier');
    expect(await get(s, 'app')).toEqual({ password: 'plain-secret-v1' });

    const forced = await cli.run(['operator', 'snapshot', 'restore', '-force', otherSnap]);
    expect(forced).toMatchObject({ code: 0 });
    expect((await s.api('GET', 'sys/seal-status', undefined, { token: null })).body.sealed).toBe(true);
    const wrong = await s.api('POST', 'sys/unseal', { key: s.unsealKey }, { token: null });
    expect(wrong.status).toBe(400);
    await unseal(s, other.unsealKey);
    s.rootToken = other.rootToken;
    s.unsealKey = other.unsealKey;
    await serving(s);
    expect(await get(s, 'app')).toEqual({ password: 'other' });
  });

  it('a server killed (SIGKILL) in the middle of a restore comes back with one of the two states', async () => {
    await put(s, 'app', { password: 'before-kill' });
    const base = join(dir, 'base.snap');
    expect((await cliRunner({ addr: s.url, token: s.rootToken }).run(['operator', 'snapshot', 'save', base])).code).toBe(0);
    await put(s, 'app', { password: 'old-state' });
    // The snapshot plus many filler entries (never read by anything), so that applying it takes a while.
    const FILLERS = 40_000;
    const big = join(dir, 'big.snap');
    async function* entries() {
      const real = [];
      for await (const e of format.readSnapshotFile(base)) real.push(e);
      let i = 0;
      for (const e of real) {
        while (i < FILLERS && `filler/${String(i).padStart(6, '0')}` < e.key) yield { key: `filler/${String(i++).padStart(6, '0')}`, value: randomBytes(256) };
        yield e;
      }
      while (i < FILLERS) yield { key: `filler/${String(i++).padStart(6, '0')}`, value: randomBytes(256) };
    }
    await format.writeFileSynced(big, format.encodeSnapshot(entries(), storage.name));

    const pg = storage.name === 'postgresql' ? new Client({ connectionString: postgresUrl() }) : null;
    await pg?.connect();
    let finished = false;
    const upload = fetch(`${s.url}/v1/sys/storage/snapshot-restore`, { method: 'POST', headers: { 'X-Service-Token': s.rootToken }, body: readFileSync(big) })
      .catch(() => null)
      .finally(() => (finished = true));
    // Kill it while it applies the upload (the server has stopped serving meanwhile).
    while (!(await storage.applying(s, pg))) {
      if (finished) throw new Error('the restore finished before it could be killed');
      await new Promise((res) => setImmediate(res));
    }
    await s.stop('SIGKILL');
    await upload;
    await pg?.end();

    const back = await restartConfigServer(s);
    tables.set(back, tables.get(s)!);
    for (let i = 0; (await back.api('GET', 'sys/seal-status', undefined, { token: null })).status !== 200 && i < 300; i++) await new Promise((r) => setTimeout(r, 100));
    await unseal(back, s.unsealKey);
    back.rootToken = s.rootToken;
    await serving(back);
    const app = await get(back, 'app');
    // LevelDB is read once the server let go of it.
    await back.stop();
    const fillers = await storage.count(back, 'filler/');
    // One state whole, never a mix: LevelDB finishes a decided restore at open; PostgreSQL rolls the transaction back.
    if (storage.afterKill === 'old') {
      expect(fillers).toBe(0);
      expect(app).toEqual({ password: 'old-state' });
    } else {
      expect(fillers).toBe(FILLERS);
      expect(app).toEqual({ password: 'before-kill' });
    }
  });
});

describe('scheduled snapshots', () => {
  it('writes a snapshot every interval into path, keeps the newest `retain`, and sets the last-success gauge', async () => {
    const started = Date.now() / 1000;
    const s = await startConfigServer(`storage "level" {\n  path = "$DIR/data"\n}\n${LISTENER}snapshot {\n  interval = "1s"\n  path = "$DIR"\n  retain = 2\n}\n`);
    const init = await s.api('POST', 'sys/init', { secret_shares: 1, secret_threshold: 1 }, { token: null });
    s.rootToken = init.body.root_token;
    await unseal(s as Server, init.body.keys[0]);
    const dir = join(s.configFile, '..');
    const ours = () => readdirSync(dir).filter((n) => /^strongroom-snapshot-\d{8}T\d{9}Z\.snap$/.test(n)).sort();
    // Enough intervals for more than `retain` files to have been written.
    for (let i = 0; i < 600 && ours().length < 2; i++) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 3500));
    const files = ours();
    expect(files).toHaveLength(2);
    for (const f of files) expect((await format.verifySnapshotFile(join(dir, f))).count).toBeGreaterThan(3);
    // No partial file is left behind beside them.
    expect(readdirSync(dir).filter((n) => n.endsWith('.partial'))).toEqual([]);
    const metrics = await s.api('GET', 'sys/metrics?format=prometheus');
    const last = Number(/^strongroom_snapshot_last_success_timestamp_seconds(?:\{[^}]*\})? (\S+)$/m.exec(metrics.text)?.[1]);
    expect(last).toBeGreaterThan(started);
    await s.stop();
  });

  it('a bad snapshot block stops the server with a message naming the key', async () => {
    await expect(startConfigServer(`storage "level" {\n  path = "$DIR/data"\n}\n${LISTENER}snapshot {\n  interval = "1s"\n  path = "$DIR/missing"\n}\n`)).rejects.toThrow(/snapshot\.path/);
  });
});

describe('leases across a restore', () => {
  it("the restored expiration manager holds the snapshot's leases (and revokes them when due); a lease issued after it is unknown", async () => {
    const s = await startLeaseServer();
    const cli = cliRunner({ addr: s.url, token: s.rootToken });
    const file = join(scratchDir('sr-snap-lease-'), 'leases.snap');
    expect((await s.api('POST', 'lt/roles/soon', { ttl: 4, record: true })).status).toBe(204);
    expect((await s.api('POST', 'lt/roles/long', { ttl: 3600, record: true })).status).toBe(204);
    const before = (await s.api('GET', 'lt/creds/long')).body;
    const due = (await s.api('GET', 'lt/creds/soon')).body;
    expect((await cli.run(['operator', 'snapshot', 'save', file])).code).toBe(0);

    const after = (await s.api('GET', 'lt/creds/long')).body;
    expect((await s.api('POST', 'sys/leases/revoke', { lease_id: before.lease_id, sync: true })).status).toBe(204);
    expect((await s.api('POST', 'sys/leases/lookup', { lease_id: before.lease_id })).status).toBe(400);
    expect((await records(s)).revoked[before.data.username]?.count).toBe(1);

    expect((await cli.run(['operator', 'snapshot', 'restore', file])).code).toBe(0);
    // Revoked after the snapshot: back. Issued after it: unknown to the restored server.
    expect((await s.api('POST', 'sys/leases/lookup', { lease_id: before.lease_id })).status).toBe(200);
    expect((await s.api('POST', 'sys/leases/lookup', { lease_id: after.lease_id })).status).toBe(400);
    expect((await s.api('LIST', 'sys/leases/lookup/lt/creds/long/')).body.data.keys).toEqual([before.lease_id.split('/').pop()]);
    // The restored manager revokes the snapshot's short lease when it is due, once.
    for (let i = 0; i < 300 && (await records(s)).revoked[due.data.username]?.count !== 1; i++) await new Promise((r) => setTimeout(r, 100));
    expect((await records(s)).revoked[due.data.username]?.count).toBe(1);
    // The plugin's own storage is the snapshot's too: the revocation of `before` made after it is forgotten.
    expect((await records(s)).revoked[before.data.username]).toBeUndefined();
    await s.stop();
  });

  it('the upload is streamed: a snapshot larger than max_request_size restores', async () => {
    const s = await startConfigServer(`storage "level" {\n  path = "$DIR/data"\n}\nlistener "tcp" {\n  address = "127.0.0.1:$PORT"\n  tls_disable = true\n  max_request_size = 4096\n}\n`);
    const init = await s.api('POST', 'sys/init', { secret_shares: 1, secret_threshold: 1 }, { token: null });
    s.rootToken = init.body.root_token;
    await unseal(s as Server, init.body.keys[0]);
    for (let i = 0; i < 5; i++) expect((await s.api('PUT', `sys/policies/acl/p${i}`, { policy: `path "secret/${'x'.repeat(2000)}${i}" { capabilities = ["read"] }` })).status).toBe(204);
    const file = join(scratchDir('sr-snap-big-'), 'big.snap');
    expect((await cliRunner({ addr: s.url, token: s.rootToken }).run(['operator', 'snapshot', 'save', file])).code).toBe(0);
    expect(readFileSync(file).length).toBeGreaterThan(10_000);
    expect((await s.api('DELETE', 'sys/policies/acl/p0')).status).toBe(204);
    const r = await cliRunner({ addr: s.url, token: s.rootToken }).run(['operator', 'snapshot', 'restore', file]);
    expect(r).toMatchObject({ code: 0 });
    expect((await s.api('GET', 'sys/policies/acl/p0')).status).toBe(200);
    // Any other body is still bound by the limit.
    expect((await s.api('PUT', 'sys/policies/acl/big', { policy: 'x'.repeat(5000) })).status).toBe(413);
    await s.stop();
  });
});

describe('across storage types', () => {
  it('a LevelDB server\'s snapshot, restored with -force on a PostgreSQL server, opens with the first server\'s key (a migration)', async () => {
    const [level, pg] = STORAGES as [Storage, Storage];
    const from = await fresh(level);
    await put(from, 'moved', { v: 'from-level' });
    const file = join(scratchDir('sr-snap-move-'), 'move.snap');
    expect((await cliRunner({ addr: from.url, token: from.rootToken }).run(['operator', 'snapshot', 'save', file])).code).toBe(0);
    await from.stop();

    const to = await fresh(pg);
    expect((await cliRunner({ addr: to.url, token: to.rootToken }).run(['operator', 'snapshot', 'restore', '-force', file])).code).toBe(0);
    await unseal(to, from.unsealKey);
    to.rootToken = from.rootToken;
    await serving(to);
    expect(await get(to, 'moved')).toEqual({ v: 'from-level' });
    expect((await to.api('GET', 'sys/seal-status', undefined, { token: null })).body.storage_type).toBe('postgresql');
    await to.stop();
  });
});

describe('HA storage', () => {
  it('takes a snapshot on the active node and refuses a restore (400), changing nothing', async () => {
    const t = `snap_${randomBytes(6).toString('hex')}`;
    const s = await startConfigServer(haPostgresConfig({ tables: { data: t, lock: `${t}_ha` } }));
    tables.set(s, t);
    let init = await s.api('POST', 'sys/init', { secret_shares: 1, secret_threshold: 1 }, { token: null });
    for (let i = 0; init.status === 503 && i < 300; i++) {
      await new Promise((r) => setTimeout(r, 100));
      init = await s.api('POST', 'sys/init', { secret_shares: 1, secret_threshold: 1 }, { token: null });
    }
    s.rootToken = init.body.root_token;
    await unseal(s, init.body.keys[0]);
    await serving(s);
    const file = join(scratchDir('sr-snap-ha-'), 'ha.snap');
    const cli = cliRunner({ addr: s.url, token: s.rootToken });
    expect((await cli.run(['operator', 'snapshot', 'save', file])).code).toBe(0);
    expect((await format.verifySnapshotFile(file)).count).toBeGreaterThan(3);
    const r = await cli.run(['operator', 'snapshot', 'restore', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('not supported on HA storage');
    expect((await s.api('GET', 'sys/seal-status', undefined, { token: null })).body.sealed).toBe(false);
    expect((await s.api('GET', 'sys/mounts')).status).toBe(200);
    await s.stop();
  });
});
