#!/usr/bin/env node
/**
 * Micro-benchmark of the transit hot path in-process (no gRPC, no core):
 * single encrypt, single decrypt, and a 1,000-item batch encrypt through the
 * backend's handleRequest with a cached key. Run after `npx tsc -b plugins/transit`:
 *   node plugins/transit/bench/encrypt-bench.js
 * Not a test: it prints rates and asserts nothing.
 */
'use strict';
const path = require('node:path');
const { createMemoryStorage } = require('@strongroom/sdk-plugin/testing');
const { createTransitFactory } = require(path.join(__dirname, '../dist/index.js'));

const client = { remoteAddress: '127.0.0.1', displayName: 'root', tokenAccessor: '', entityId: '', policies: ['root'], metadata: {} };
const mount = { path: 'transit/', type: 'transit', uuid: 'bench', accessor: 'transit_bench', namespace: '', options: {}, isAuth: false };

async function main() {
  const storage = createMemoryStorage();
  const logger = { debug() {}, info() {}, warn() {}, error() {} };
  const system = { defaultLeaseTtl: async () => 0, maxLeaseTtl: async () => 0, generatePasswordFromPolicy: async () => '', coreVersion: async () => 'bench' };
  const b = await createTransitFactory().create({ mount, storage, system, logger });
  let id = 0;
  const req = (operation, p, data) => b.handleRequest({ id: String(id++), operation, path: p, mount, data, client });
  await req('update', 'keys/k', {});
  const plaintext = Buffer.from('x'.repeat(64)).toString('base64');
  const { data } = await req('update', 'encrypt/k', { plaintext });

  async function rate(name, n, fn) {
    for (let i = 0; i < Math.min(n, 1000); i++) await fn();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) await fn();
    const s = Number(process.hrtime.bigint() - t0) / 1e9;
    console.log(`${name}: ${Math.round(n / s)} ops/s (${((s / n) * 1e6).toFixed(1)} µs/op)`);
  }
  await rate('encrypt 64 B', 50000, () => req('update', 'encrypt/k', { plaintext }));
  await rate('decrypt 64 B', 50000, () => req('update', 'decrypt/k', { ciphertext: data.ciphertext }));
  const batch = Array.from({ length: 1000 }, () => ({ plaintext }));
  await rate('batch encrypt x1000 (per batch)', 200, () => req('update', 'encrypt/k', { batch_input: batch }));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
