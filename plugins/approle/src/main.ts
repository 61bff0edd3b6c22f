#!/usr/bin/env node
import { serve } from '@strongroom/sdk-plugin';
import { approleBackend } from './backend.js';

serve(approleBackend).catch((err: unknown) => {
  process.stderr.write(`approle plugin failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
