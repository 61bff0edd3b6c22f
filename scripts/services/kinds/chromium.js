/**
 * Debian's Chromium for the web UI's browser tests (test/ui/), driven headless
 * by playwright-core. Not a server: `up` makes sure the binary is there
 * (installing the Debian `chromium` package when it is missing, never a
 * downloaded browser build) and answers its path; each test file starts and
 * stops its own browser process.
 */
'use strict';
const fs = require('node:fs');
const { log, aptInstall } = require('../lib');

const CANDIDATES = ['/usr/bin/chromium', '/usr/lib/chromium/chromium'];

const found = () => CANDIDATES.find((p) => fs.existsSync(p));

async function up() {
  if (!found()) aptInstall(['chromium'], 'Chromium not found');
  const bin = found();
  if (!bin) throw new Error('chromium still not found after installing the Debian package');
  log(`chromium at ${bin}`);
  return { url: bin, port: 0 };
}

module.exports = {
  env: 'STRONGROOM_TEST_CHROMIUM',
  up,
  // Nothing runs: there is nothing to stop.
  down: async () => undefined,
  running: async (s) => fs.existsSync(s.url),
};
