import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAuditBroker, type AuditEntry } from './broker';
import { createNullLogger } from '../log/logger';
import { createMemoryStorage } from '@strongroom/sdk-plugin/host';

const entry = (token: string, secret: string): AuditEntry => ({
  auth: { client_token: token, accessor: 'acc-1', display_name: 'root', policies: ['root'], token_policies: ['root'], metadata: {}, entity_id: '', token_type: 'service', token_ttl: 0 },
  request: { id: 'r1', operation: 'update', path: 'secret/data/x', mount_type: 'kv', mount_accessor: 'kv_1', namespace: { id: 'root', path: '' }, remote_address: '127.0.0.1', client_token: token, client_token_accessor: 'acc-1', data: { data: { password: secret }, plain_key: 'visible' } },
  response: { mount_type: 'kv', data: { password: secret, n: 3 }, secret: null, auth: null, warnings: null, status: 200 },
  nonHmacRequestKeys: ['plain_key'],
});

describe('audit broker', () => {
  it('writes JSON lines with tokens and secret values only as HMACs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-'));
    const file = join(dir, 'audit.log');
    const broker = createAuditBroker({ store: createMemoryStorage(), logger: createNullLogger() });
    await broker.enable('file', 'file', { file_path: file }, '', false);
    await broker.logRequest(entry('srs.SECRETTOKEN', 'hunter2-password'));
    await broker.logResponse(entry('srs.SECRETTOKEN', 'hunter2-password'));
    await broker.close();
    const text = readFileSync(file, 'utf8');
    const lines = text.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toHaveLength(2);
    expect(text).not.toContain('SECRETTOKEN');
    expect(text).not.toContain('hunter2');
    expect(lines[0].request.data.plain_key).toBe('visible');
    expect(lines[1].response.data.password).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    expect(lines[1].response.data.n).toBe(3);
  });

  it('hashes a known value the same way the log does (sys/audit-hash)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-'));
    const file = join(dir, 'a.log');
    const broker = createAuditBroker({ store: createMemoryStorage(), logger: createNullLogger() });
    await broker.enable('f2', 'file', { file_path: file }, '', false);
    await broker.logResponse(entry('t', 'known-value'));
    const line = JSON.parse(readFileSync(file, 'utf8').trim());
    expect(line.response.data.password).toBe(broker.hash('f2', 'known-value'));
    expect(broker.hash('f2', 'other')).not.toBe(line.response.data.password);
    await broker.close();
  });

  it('fails the request when every device fails, succeeds when one still writes', async () => {
    const broker = createAuditBroker({ store: createMemoryStorage(), logger: createNullLogger(), timeoutMs: 500 });
    // /dev/full opens fine and fails every write with ENOSPC.
    await broker.enable('full', 'file', { file_path: '/dev/full' }, '', false);
    await expect(broker.logRequest(entry('t', 's'))).rejects.toThrow(/every enabled audit device failed/);
    await broker.enable('ok', 'file', { file_path: 'discard' }, '', false);
    await expect(broker.logRequest(entry('t', 's'))).resolves.toBeUndefined();
    await broker.close();
  });

  it('refuses unknown device types and missing file_path with a 400 naming the field', async () => {
    const broker = createAuditBroker({ store: createMemoryStorage(), logger: createNullLogger() });
    await expect(broker.enable('x', 'kafka', {}, '', false)).rejects.toThrow(/type/);
    await expect(broker.enable('x', 'file', {}, '', false)).rejects.toThrow(/file_path/);
  });
});
