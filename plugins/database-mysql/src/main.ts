#!/usr/bin/env node
/**
 * mysql-database-plugin (MySQL and MariaDB) as a process of its own: how a
 * registered (external) version runs, started by the core, never by hand. The
 * built-in version runs inside the database engine
 * (plugins/database/src/builtins.ts).
 */
import * as database from '@strongroom/sdk-plugin/database';
import { mysqlPlugin } from './mysql.js';

void database.serveDatabasePlugin(mysqlPlugin);
