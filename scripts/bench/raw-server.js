'use strict';
/*
 * The ceiling: a bare node:http server answering Vault-shaped JSON, run as its own child
 * process so the bench compares the real binary against what node:http alone can do on
 * this machine in the same run. GET answers a sys/health body; POST reads the request body
 * and answers a transit-encrypt body. `/status/<code>` answers that status, which run.js
 * uses to check that the load generator counts non-2xx responses.
 * Prints `listening <port>` on stdout once ready.
 */
const http = require('node:http');

const healthBody = JSON.stringify({
  initialized: true, sealed: false, standby: false, performance_standby: false,
  replication_performance_mode: 'disabled', replication_dr_mode: 'disabled',
  server_time_utc: 1763769600, version: '0.1.0', cluster_name: 'strongroom-dev', cluster_id: '00000000-0000-0000-0000-000000000000',
});
const encryptBody = JSON.stringify({
  request_id: '00000000-0000-0000-0000-000000000000', lease_id: '', renewable: false, lease_duration: 0,
  data: { ciphertext: `vault:v1:${'A'.repeat(120)}`, key_version: 1 }, wrap_info: null, warnings: null, auth: null,
});

const server = http.createServer((req, res) => {
  const status = /^\/status\/(\d{3})$/.exec(req.url ?? '');
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    if (status) {
      res.writeHead(Number(status[1]), { 'content-type': 'application/json' });
      res.end('{"errors":["forced status"]}');
      return;
    }
    if (req.method === 'POST') JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    const body = req.method === 'POST' ? encryptBody : healthBody;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
