export { MissingTableError, OutdatedTableError } from './errors.js';
export {
  DEFAULT_MAX_TIMEOUT_MS,
  DEFAULT_POOL_SIZE,
  DEFAULT_TIMEOUT_MS,
  type MigrateOptions,
  migrate,
  type PostgresLogger,
  PostgresStore,
  type PostgresStoreOptions,
} from './store.js';
export type { PostgresClock } from './transaction.js';
