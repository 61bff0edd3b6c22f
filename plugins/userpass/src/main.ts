#!/usr/bin/env node
import { serve } from '@strongroom/sdk-plugin';
import { userpassBackend } from './backend.js';

serve(userpassBackend).catch((err: unknown) => {
  process.stderr.write(`userpass plugin failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
