/**
 * Long lease operations show their progress in sys/monitor while they run: a
 * real server with 1001 leases of the real lease plugin restores them at
 * unseal, tidies them and revokes them by prefix, each logging a progress
 * line at the thousandth lease and a closing line, seen by a monitor at info.
 */
import { openMonitor } from '../helpers/monitor';
import { startLeaseServer, type LeaseServer } from '../helpers/lease-plugin';

jest.setTimeout(600_000);

const LEASES = 1001;
let s: LeaseServer;

beforeAll(async () => {
  s = await startLeaseServer();
  expect((await s.api('POST', 'lt/roles/bulk', { ttl: 3600 })).status).toBe(204);
  let made = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (made < LEASES) {
        made++;
        const r = await s.api('GET', 'lt/creds/bulk');
        if (r.status !== 200 || !r.body.lease_id) throw new Error(`creating a lease: ${r.status} ${r.text}`);
      }
    }),
  );
});

afterAll(async () => {
  await s?.stop();
});

it('lease restore, tidy and revoke-prefix log progress lines a monitor sees', async () => {
  const m = await openMonitor(s, 'log_level=info&log_format=json');
  try {
    // The monitor outlives a seal: the lines of the restore at unseal reach it.
    expect((await s.api('PUT', 'sys/seal')).status).toBe(204);
    await m.waitFor(/"message":"sealed"/);
    for (const key of s.unsealKeys) await s.api('PUT', 'sys/unseal', { key }, { token: null });
    const restoring = JSON.parse(await m.waitFor(/"message":"restoring leases: progress"/));
    expect(restoring).toMatchObject({ logger: 'expiration', level: 'info' });
    expect(restoring.loaded + restoring.skipped).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(await m.waitFor(/"message":"leases restored"/)).loaded).toBe(LEASES);

    expect((await s.api('PUT', 'sys/leases/tidy')).status).toBe(200);
    expect(JSON.parse(await m.waitFor(/"message":"tidy: scanning leases"/)).scanned).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(await m.waitFor(/"message":"tidy finished"/)).scanned).toBe(LEASES);

    const r = await s.api('PUT', 'sys/leases/revoke-prefix/lt/creds/bulk', { sync: true });
    expect(r.status).toBe(204);
    const progress = JSON.parse(await m.waitFor(/"message":"revoking leases by prefix: progress"/));
    expect(progress).toMatchObject({ prefix: 'lt/creds/bulk', of: LEASES });
    expect(progress.done).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(await m.waitFor(/"message":"revoked leases by prefix"/))).toMatchObject({ count: LEASES });
  } finally {
    m.stop();
  }
});
