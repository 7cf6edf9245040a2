/** The store's table is missing and the store was told not to create it (`createTable: false`). */
export class MissingTableError extends Error {
  readonly code = 'ERR_SLUICE_POSTGRES_NO_TABLE';

  constructor(table: string) {
    super(
      `${table} does not exist: run \`sluice migrate --postgres URL\` or migrate(), or pass createTable: true`,
    );
    this.name = 'MissingTableError';
  }
}

/** The store's table predates a column this version needs (made by an older @sluice/postgres): migrate it. */
export class OutdatedTableError extends Error {
  readonly code = 'ERR_SLUICE_POSTGRES_OLD_TABLE';

  constructor(table: string) {
    super(
      `${table} lacks the version column: run \`sluice migrate --postgres URL\` or migrate() to upgrade it`,
    );
    this.name = 'OutdatedTableError';
  }
}
