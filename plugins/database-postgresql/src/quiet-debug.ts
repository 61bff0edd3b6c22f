/**
 * Imported first by postgresql.ts, so it runs before knex loads, in the plugin's own
 * process and in the database engine's alike: the `debug` module knex uses
 * would print every SQL statement (passwords included) to stderr when DEBUG
 * names knex. A database plugin never honours DEBUG.
 */
delete process.env.DEBUG;
export {};
