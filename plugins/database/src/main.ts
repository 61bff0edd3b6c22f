#!/usr/bin/env node
import { serve } from '@strongroom/sdk-plugin';
import { databaseBackend } from './backend.js';

serve(databaseBackend).catch((err: unknown) => {
  process.stderr.write(`database plugin failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
