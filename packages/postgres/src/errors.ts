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
