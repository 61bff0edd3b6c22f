#!/usr/bin/env node
'use strict';
// The `strongroom` command. A committed file rather than dist/cli/main.js, so
// that npm links the bin on a fresh clone, before `prepare` has built dist/.
require('../dist/cli/main.js').run(process.argv.slice(2));
