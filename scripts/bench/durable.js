'use strict';
/*
 * The durable-write ceiling of this machine, measured in the bench's own run: a LevelDB of
 * its own in a temp dir (classic-level, the engine under the core's storage), each put
 * `sync: true` (fsync'd before it resolves, so concurrent puts share fsyncs as LevelDB groups
 * them), its value AES-256-GCM sealed as the barrier seals an entry. `put()` is one such
 * write; `micro()` runs them alone at 32 in flight, the reference for kv writes and logins.
 */
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { timedLoop } = require('./timed.js');

const ROOT = path.resolve(__dirname, '..', '..');
const VALUE_BYTES = 256;

async function openDurable() {
  const { ClassicLevel } = require(require.resolve('classic-level', { paths: [path.join(ROOT, 'core')] }));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strongroom-bench-level-'));
  const db = new ClassicLevel(dir, { keyEncoding: 'utf8', valueEncoding: 'buffer' });
  await db.open();
  const key = crypto.randomBytes(32);
  const plain = crypto.randomBytes(VALUE_BYTES);
  let n = 0;
  return {
    /** One sealed entry written durably under a fresh key. */
    async put(prefix = 'k') {
      const iv = crypto.randomBytes(12);
      const c = crypto.createCipheriv('aes-256-gcm', key, iv);
      const sealed = Buffer.concat([iv, c.update(plain), c.final(), c.getAuthTag()]);
      await db.put(`${prefix}/${n++}`, sealed, { sync: true });
    },
    async close() {
      await db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Sealed `sync: true` puts of 256 B at `concurrency` in flight, alone. */
async function durablePutMicro({ concurrency, warmupMs, measureMs }) {
  const d = await openDurable();
  try {
    return await timedLoop({ concurrency, warmupMs, measureMs, op: () => d.put() });
  } finally {
    await d.close();
  }
}

module.exports = { openDurable, durablePutMicro };
