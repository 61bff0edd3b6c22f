#!/usr/bin/env -S MALLOC_MMAP_THRESHOLD_=131072 node
'use strict';
// glibc raises its mmap threshold after freeing a large block, so later large buffers (a 30 MB
// request body, LevelDB's copies of it) come from heaps it rarely gives back; a fixed threshold
// keeps them mapped on their own and unmapped when freed (issue 31; DESIGN §7, "Large bodies").
// glibc reads it only at process start, hence here (env -S, coreutils 8.30+); other C libraries ignore it.
// The `strongroom` command. A committed file rather than dist/cli/main.js, so
// that npm links the bin on a fresh clone, before `prepare` has built dist/.
require('../dist/cli/main.js').run(process.argv.slice(2));
