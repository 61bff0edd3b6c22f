#!/usr/bin/env node
/**
 * Writes sdk-plugin/src/transport/protocol.json: the wire contract (proto/*.proto)
 * as a protobufjs JSON descriptor. The SDK loads the contract from it instead of
 * reading .proto files at run time, so a plugin bundled into one file (README)
 * carries its contract inside, and the catalog's sha256 covers it.
 * `node scripts/proto-json.js --check` fails when the descriptor is stale.
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const protobuf = require('protobufjs');

const root = path.join(__dirname, '..');
const protoDir = path.join(root, 'proto');
const out = path.join(root, 'sdk-plugin/src/transport/protocol.json');

function descriptor() {
  const r = new protobuf.Root();
  r.resolvePath = (_origin, target) => path.join(protoDir, target);
  r.loadSync(['backend.proto', 'database.proto', 'grpc/health/v1/health.proto'], { keepCase: true });
  return `${JSON.stringify(r.toJSON(), null, 1)}\n`;
}

module.exports = { descriptor, out };

if (require.main === module) {
  const text = descriptor();
  if (process.argv.includes('--check')) {
    if (fs.readFileSync(out, 'utf8') !== text) {
      process.stderr.write('sdk-plugin/src/transport/protocol.json is stale: run node scripts/proto-json.js\n');
      process.exit(1);
    }
  } else {
    fs.writeFileSync(out, text);
  }
}
