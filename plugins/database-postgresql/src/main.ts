#!/usr/bin/env node
/** postgresql-database-plugin: a database plugin process (started by the core, never by hand). */
import './quiet-debug.js';
import * as database from '@strongroom/sdk-plugin/database';
import { postgresqlPlugin } from './postgresql.js';

void database.serveDatabasePlugin(postgresqlPlugin);
