#!/usr/bin/env node
/** Plugin process entry point: serve the transit engine over the plugin protocol. */
import { serve } from '@strongroom/sdk-plugin';
import { transitFactory } from './index.js';

serve(transitFactory).catch((err: unknown) => {
  process.stderr.write(`${JSON.stringify({ level: 'error', message: 'transit plugin failed to start', error: err instanceof Error ? err.message : String(err) })}\n`);
  process.exit(1);
});
