/** jest globalTeardown: stops the servers that tests started in this run (test/helpers/services.ts); ones started by hand stay up. */
'use strict';
const { execFileSync } = require('node:child_process');
const { existsSync } = require('node:fs');
const { join } = require('node:path');

module.exports = async function teardown() {
  if (!existsSync(join(__dirname, '../../.test-services/state.json'))) return;
  execFileSync(process.execPath, [join(__dirname, 'services.js'), 'down', '--for-tests'], { stdio: 'inherit', timeout: 300_000 });
};
