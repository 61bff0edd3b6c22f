#!/usr/bin/env node
import { serve } from '@strongroom/sdk-plugin';
import { rabbitmqBackend } from './backend.js';

serve(rabbitmqBackend).catch((err: unknown) => {
  process.stderr.write(`rabbitmq plugin failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
