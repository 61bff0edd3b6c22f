/**
 * Imported first by main.ts: the `debug` module knex uses would print every
 * SQL statement (passwords included) to stderr when DEBUG names knex. A
 * database plugin never honours DEBUG.
 */
delete process.env.DEBUG;
export {};
