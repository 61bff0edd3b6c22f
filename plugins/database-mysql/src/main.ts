#!/usr/bin/env node
/** mysql-database-plugin (MySQL and MariaDB): a database plugin process (started by the core, never by hand). */
import './quiet-debug.js';
import * as database from '@strongroom/sdk-plugin/database';
import { mysqlPlugin } from './mysql.js';

void database.serveDatabasePlugin(mysqlPlugin);
