#!/usr/bin/env node
import { serve } from '@strongroom/sdk-plugin';
import { ldapBackend } from './backend.js';

serve(ldapBackend).catch((err: unknown) => {
  process.stderr.write(`ldap plugin failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
