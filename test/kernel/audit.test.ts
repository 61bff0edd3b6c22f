/**
 * The file audit device through the real binary: request and response
 * entries as JSON lines, tokens and secret values only as HMAC-SHA256
 * (checked against sys/audit-hash and by searching the file for the plain
 * text), disable, and a request refused when every enabled device fails.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDevServer, type RunningServer } from '../helpers/server';

let s: RunningServer;
let dir: string;
let logFile: string;
// Random, so it cannot appear in the log by accident (the word "root" does, as a policy name).
const rootToken = `root-${randomBytes(8).toString('hex')}`;
const secretValue = `hunter2-${randomBytes(8).toString('hex')}`;

beforeAll(async () => {
  s = await startDevServer({ rootTokenId: rootToken });
  dir = mkdtempSync(join(tmpdir(), 'sr-audit-'));
  logFile = join(dir, 'audit.log');
});
afterAll(async () => {
  await s.stop();
  rmSync(dir, { recursive: true, force: true });
});

function entries(): any[] {
  return readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));
}

async function auditHash(device: string, input: string): Promise<string> {
  const r = await s.api('POST', `sys/audit-hash/${device}`, { input });
  expect(r.status).toBe(200);
  return r.body.data.hash;
}

describe('file audit device', () => {
  let created: { client_token: string; accessor: string };

  it('is enabled and listed', async () => {
    expect((await s.api('POST', 'sys/audit/file', { type: 'file', description: 'e2e', options: { file_path: logFile } })).status).toBe(204);
    const list = await s.api('GET', 'sys/audit');
    expect(list.body.data['file/']).toMatchObject({ type: 'file', description: 'e2e', options: { file_path: logFile } });
  });

  // Issue 20: a write goes to a plugin in one round trip only without audit devices; with one,
  // the core asks the engine first, so the request entry names the operation that ran.
  it('names a write create or update as the engine decided it, before the backend runs', async () => {
    expect((await s.api('POST', 'secret/data/audited-op', { data: { v: 1 } })).status).toBe(200);
    expect((await s.api('POST', 'secret/data/audited-op', { data: { v: 2 } })).status).toBe(200);
    const ops = entries()
      .filter((e) => e.type === 'request' && e.request?.path === 'secret/data/audited-op')
      .map((e) => e.request.operation);
    expect(ops).toEqual(['create', 'update']);
  });

  it('writes a request and a response entry per request, with secrets and tokens only as HMACs', async () => {
    expect((await s.api('POST', 'secret/data/audited', { data: { password: secretValue } })).status).toBe(200);
    const t = await s.api('POST', 'auth/token/create', { policies: ['default'], ttl: '1h' });
    created = t.body.auth;

    const log = entries();
    const kv = log.filter((e) => e.request?.path === 'secret/data/audited');
    expect(kv.map((e) => e.type)).toEqual(['request', 'response']);
    const [req, res] = kv;
    expect(req.request).toMatchObject({ operation: 'create', mount_type: 'kv', namespace: { id: 'root' } });
    expect(req.request.id).toBe(res.request.id);

    const hashedSecret = await auditHash('file', secretValue);
    expect(hashedSecret).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    expect(req.request.data.data.password).toBe(hashedSecret);
    const hashedRoot = await auditHash('file', rootToken);
    expect(req.request.client_token).toBe(hashedRoot);
    expect(req.auth.client_token).toBe(hashedRoot);
    expect(res.response.status).toBe(200);

    const tokenRes = log.find((e) => e.type === 'response' && e.request?.path === 'auth/token/create');
    expect(tokenRes.response.auth.client_token).toBe(await auditHash('file', created.client_token));
    expect(tokenRes.response.auth.accessor).toBe(await auditHash('file', created.accessor));
    expect(tokenRes.response.auth.policies).toEqual(['default']);

    // Nothing in plain text anywhere in the file.
    const raw = readFileSync(logFile, 'utf8');
    for (const plain of [secretValue, rootToken, created.client_token, created.accessor]) expect(raw.includes(plain)).toBe(false);
  });

  it("HMACs a field the engine declares sensitive even when the mount lists it in audit_non_hmac_request_keys, and writes the others listed in plain", async () => {
    expect((await s.api('POST', 'sys/auth/approle', { type: 'approle', config: { audit_non_hmac_request_keys: ['secret_id', 'role_id', 'note'] } })).status).toBe(204);
    expect((await s.api('POST', 'auth/approle/role/web', { token_policies: 'default' })).status).toBe(204);
    const roleId = (await s.api('GET', 'auth/approle/role/web/role-id')).body.data.role_id as string;
    const secretId = (await s.api('POST', 'auth/approle/role/web/secret-id', {})).body.data.secret_id as string;
    expect((await s.api('POST', 'auth/approle/login', { role_id: roleId, secret_id: secretId, note: 'plain-note' }, { token: '' })).status).toBe(200);
    const login = entries().find((e) => e.type === 'request' && e.request?.path === 'auth/approle/login');
    expect(login.request.data.note).toBe('plain-note');
    expect(login.request.data.role_id).toBe(await auditHash('file', roleId));
    expect(login.request.data.secret_id).toBe(await auditHash('file', secretId));
    expect(readFileSync(logFile, 'utf8').includes(secretId)).toBe(false);
  });

  it('hashes with a per-device key', async () => {
    const other = join(dir, 'other.log');
    expect((await s.api('POST', 'sys/audit/other', { type: 'file', options: { file_path: other } })).status).toBe(204);
    expect(await auditHash('other', secretValue)).not.toBe(await auditHash('file', secretValue));
    expect((await s.api('DELETE', 'sys/audit/other')).status).toBe(204);
  });

  it('stops writing once disabled', async () => {
    expect((await s.api('DELETE', 'sys/audit/file')).status).toBe(204);
    expect((await s.api('GET', 'sys/audit')).body.data['file/']).toBeUndefined();
    const size = statSync(logFile).size;
    expect((await s.api('POST', 'secret/data/unaudited', { data: { v: '1' } })).status).toBe(200);
    expect(statSync(logFile).size).toBe(size);
    expect((await s.api('POST', 'sys/audit-hash/file', { input: 'x' })).status).toBe(400);
  });

  it('refuses a request when every enabled device fails to write it, and serves it while one still works', async () => {
    // /dev/full accepts the open and fails every write with ENOSPC, even for root.
    expect(existsSync('/dev/full')).toBe(true);
    const good = join(dir, 'good.log');
    expect((await s.api('POST', 'sys/audit/good', { type: 'file', options: { file_path: good } })).status).toBe(204);
    expect((await s.api('POST', 'sys/audit/full', { type: 'file', options: { file_path: '/dev/full' } })).status).toBe(204);
    // One device of two still writes: served.
    expect((await s.api('POST', 'secret/data/one-device', { data: { v: '1' } })).status).toBe(200);
    expect(readFileSync(good, 'utf8')).toMatch(/secret\/data\/one-device/);

    // Disabling the working device takes effect, but its own response can then no longer be
    // audited, so the caller gets an error (as in Vault).
    const disabled = await s.api('DELETE', 'sys/audit/good');
    expect(disabled.status).toBeGreaterThanOrEqual(500);
    expect(disabled.body.errors).toEqual(expect.any(Array));
    const goodSize = statSync(good).size;
    // Only the failing device is left: the write is refused (its request entry fails before the engine runs).
    const refused = await s.api('POST', 'secret/data/never-written', { data: { v: 'must-not-land' } });
    expect(refused.status).toBeGreaterThanOrEqual(500);
    expect(refused.body.errors).toEqual(expect.any(Array));
    expect(refused.text).not.toMatch(/must-not-land/);
    const read = await s.api('GET', 'secret/data/never-written');
    expect(read.status).toBeGreaterThanOrEqual(500);
    expect(statSync(good).size).toBe(goodSize);
    // Health is not an audited request: the server itself is fine.
    expect((await s.api('GET', 'sys/health', undefined, { token: null })).status).toBe(200);
  });
});
