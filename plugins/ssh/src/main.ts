#!/usr/bin/env node
/** Plugin process entry point: serve the SSH engine over the plugin protocol. */
import { serve } from '@strongroom/sdk-plugin';
import { sshBackend } from './backend.js';

serve(sshBackend).catch((err: unknown) => {
  process.stderr.write(`${JSON.stringify({ level: 'error', message: 'ssh plugin failed to start', error: err instanceof Error ? err.message : String(err) })}\n`);
  process.exit(1);
});
