#!/usr/bin/env node
import { serve } from '@strongroom/sdk-plugin';
import { databaseBackend } from './backend.js';

// The built-in database plugins run in this process, and drivers put credentials in their messages.
serve(databaseBackend, { redactUncaught: true }).catch((err: unknown) => {
  process.stderr.write(`database plugin failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
