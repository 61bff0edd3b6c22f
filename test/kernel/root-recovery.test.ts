/**
 * Root recovery through the real binary on a production config with three
 * shares, threshold two: the last root token revoked, a new one generated
 * from the shares with Vault's OTP scheme (token XOR otp, base64), then a
 * rekey to five shares, threshold three, after which the old shares no
 * longer unseal and the new ones do (also after a restart).
 */
import { restartConfigServer, startConfigServer, type RunningServer } from '../helpers/server';

jest.setTimeout(60_000);

const CONFIG = `storage "level" { path = "$DIR/data" }
listener "tcp" { address = "127.0.0.1:$PORT" tls_disable = true }
`;

type Cfg = RunningServer & { configFile: string };
let s: Cfg;
let keys: string[] = [];

afterAll(async () => {
  await s.stop('SIGKILL');
});

/** What `vault operator generate-root -decode` does: base64 (padded or not), XOR with the OTP. */
function decodeRoot(encoded: string, otp: string): string {
  const raw = Buffer.from(encoded, 'base64');
  const pad = Buffer.from(otp, 'utf8');
  expect(raw.length).toBe(pad.length);
  return Buffer.from(raw.map((b, i) => b ^ pad[i]!)).toString('utf8');
}

async function unsealWith(srv: RunningServer, ks: string[]): Promise<any> {
  let last: any;
  for (const key of ks) last = (await srv.api('POST', 'sys/unseal', { key }, { token: null })).body;
  return last;
}

describe('generate-root and rekey', () => {
  it('initializes with 3 shares, threshold 2, and loses its only root token', async () => {
    s = await startConfigServer(CONFIG);
    const init = await s.api('POST', 'sys/init', { secret_shares: 3, secret_threshold: 2 }, { token: null });
    expect(init.status).toBe(200);
    keys = init.body.keys;
    s.rootToken = init.body.root_token;
    expect((await unsealWith(s, keys.slice(0, 2))).sealed).toBe(false);
    expect((await s.api('POST', 'auth/token/revoke-self')).status).toBe(204);
    expect((await s.api('GET', 'sys/mounts')).status).toBe(403);
  });

  it('reports no attempt, refuses an update without one, and cancels', async () => {
    const st = await s.api('GET', 'sys/generate-root/attempt', undefined, { token: null });
    expect(st.status).toBe(200);
    expect(st.body).toMatchObject({ started: false, progress: 0, required: 2, otp_length: 28, complete: false });
    expect((await s.api('PUT', 'sys/generate-root/update', { key: keys[0], nonce: 'x' }, { token: null })).status).toBe(400);
    const started = await s.api('PUT', 'sys/generate-root/attempt', {}, { token: null });
    expect(started.body.started).toBe(true);
    expect((await s.api('PUT', 'sys/generate-root/attempt', {}, { token: null })).status).toBe(400);
    expect((await s.api('DELETE', 'sys/generate-root/attempt', undefined, { token: null })).status).toBe(204);
    expect((await s.api('GET', 'sys/generate-root/attempt', undefined, { token: null })).body.started).toBe(false);
  });

  it('a wrong nonce, a repeated share and a wrong share set are refused', async () => {
    const started = (await s.api('PUT', 'sys/generate-root/attempt', {}, { token: null })).body;
    expect((await s.api('PUT', 'sys/generate-root/update', { key: keys[0], nonce: 'not-the-nonce' }, { token: null })).status).toBe(400);
    const one = await s.api('PUT', 'sys/generate-root/update', { key: keys[0], nonce: started.nonce }, { token: null });
    expect(one.body).toMatchObject({ progress: 1, required: 2, complete: false });
    expect((await s.api('PUT', 'sys/generate-root/update', { key: keys[0], nonce: started.nonce }, { token: null })).status).toBe(400);
    // A share of the right length that is not one of ours: the set does not open the root key.
    const forged = Buffer.from(keys[1]!, 'hex');
    forged[0] = forged[0]! ^ 0xff;
    const bad = await s.api('PUT', 'sys/generate-root/update', { key: forged.toString('hex'), nonce: started.nonce }, { token: null });
    expect(bad.status).toBe(400);
    expect((await s.api('GET', 'sys/generate-root/attempt', undefined, { token: null })).body.started).toBe(false);
  });

  it('generates a new root token, returned only XORed with the OTP', async () => {
    const started = (await s.api('PUT', 'sys/generate-root/attempt', {}, { token: null })).body;
    expect(started.otp).toHaveLength(28);
    expect(started.nonce).not.toBe('');
    await s.api('PUT', 'sys/generate-root/update', { key: keys[2], nonce: started.nonce }, { token: null });
    const done = await s.api('PUT', 'sys/generate-root/update', { key: Buffer.from(keys[0]!, 'hex').toString('base64'), nonce: started.nonce }, { token: null });
    expect(done.status).toBe(200);
    expect(done.body.complete).toBe(true);
    expect(done.body.encoded_token).toBe(done.body.encoded_root_token);
    const root = decodeRoot(done.body.encoded_token, started.otp);
    expect(done.text).not.toContain(root);
    const self = await s.api('GET', 'auth/token/lookup-self', undefined, { token: root });
    expect(self.status).toBe(200);
    expect(self.body.data.policies).toEqual(['root']);
    s.rootToken = root;
    expect((await s.api('GET', 'sys/mounts')).status).toBe(200);
  });

  it('rekeys to 5 shares, threshold 3: the old shares stop working, the new ones unseal, also after a restart', async () => {
    expect((await s.api('GET', 'sys/rekey/init', undefined, { token: null })).body).toMatchObject({ started: false, required: 2 });
    expect((await s.api('PUT', 'sys/rekey/init', { secret_shares: 5, secret_threshold: 6 }, { token: null })).status).toBe(400);
    const init = await s.api('PUT', 'sys/rekey/init', { secret_shares: 5, secret_threshold: 3, require_verification: false }, { token: null });
    expect(init.status).toBe(200);
    expect(init.body).toMatchObject({ started: true, t: 3, n: 5, progress: 0, required: 2 });
    const p1 = await s.api('PUT', 'sys/rekey/update', { key: keys[1], nonce: init.body.nonce }, { token: null });
    expect(p1.body).toMatchObject({ progress: 1, started: true });
    const done = await s.api('PUT', 'sys/rekey/update', { key: keys[2], nonce: init.body.nonce }, { token: null });
    expect(done.status).toBe(200);
    expect(done.body.complete).toBe(true);
    expect(done.body.keys).toHaveLength(5);
    expect(done.body.keys_base64).toHaveLength(5);
    const fresh: string[] = done.body.keys;
    expect((await s.api('GET', 'sys/seal-status', undefined, { token: null })).body).toMatchObject({ t: 3, n: 5 });

    expect((await s.api('POST', 'sys/seal')).status).toBe(204);
    // All three old shares (the new threshold) still interpolate to the old key, which no longer opens the barrier.
    await s.api('POST', 'sys/unseal', { key: keys[0] }, { token: null });
    await s.api('POST', 'sys/unseal', { key: keys[1] }, { token: null });
    const old = await s.api('POST', 'sys/unseal', { key: keys[2] }, { token: null });
    expect(old.status).toBe(400);
    expect((await s.api('GET', 'sys/seal-status', undefined, { token: null })).body).toMatchObject({ sealed: true, progress: 0 });
    expect((await unsealWith(s, fresh.slice(0, 2))).sealed).toBe(true);
    expect((await unsealWith(s, fresh.slice(2, 3))).sealed).toBe(false);

    await s.stop();
    s = await restartConfigServer(s);
    expect((await unsealWith(s, [fresh[4]!, fresh[1]!, fresh[3]!])).sealed).toBe(false);
  });
});
