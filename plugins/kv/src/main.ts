#!/usr/bin/env node
import { serve } from '@strongroom/sdk-plugin';
import { kvBackend } from './backend.js';

serve(kvBackend).catch((err: unknown) => {
  process.stderr.write(`kv plugin failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
