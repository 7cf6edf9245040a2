import { ConfigError } from '@sluice/core/store';

/** Where the store's table lives: a schema and the table's name, each validated and quoted. */
export interface TableName {
  /** `"schema"."prefixcounters"`, ready for SQL. */
  readonly qualified: string;
  /** The index on expires_at, quoted, unqualified (CREATE INDEX names it in the table's schema). */
  readonly expiryIndex: string;
  /** The schema, quoted. */
  readonly schema: string;
  /** For messages: schema.table unquoted. */
  readonly display: string;
}

/** Plain SQL identifiers only: letters, digits, underscores, starting with a letter or underscore. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** PostgreSQL truncates longer names silently: two prefixes could then name one table. */
const MAX_IDENTIFIER = 63;
const TABLE_SUFFIX = 'counters';
const INDEX_SUFFIX = 'counters_expiry';

function identifier(option: string, value: string, suffix = ''): string {
  if (
    typeof value !== 'string' ||
    (value !== '' && !IDENTIFIER.test(value)) ||
    (value === '' && suffix === '')
  ) {
    throw new ConfigError(
      `${option} must be letters, digits and underscores, starting with a letter or underscore; got ${JSON.stringify(value)}`,
    );
  }
  if (value.length + suffix.length > MAX_IDENTIFIER) {
    throw new ConfigError(
      `${option} is too long: ${value}${suffix} exceeds PostgreSQL's ${MAX_IDENTIFIER} characters`,
    );
  }
  return `"${value}${suffix}"`;
}

/** The table for a schema and a table prefix (default `public` and `sluice_`: `public.sluice_counters`). */
export function tableName(schema = 'public', prefix = 'sluice_'): TableName {
  const quotedSchema = identifier('schema', schema);
  const table = identifier('tablePrefix', prefix, TABLE_SUFFIX);
  return {
    qualified: `${quotedSchema}.${table}`,
    schema: quotedSchema,
    expiryIndex: identifier('tablePrefix', prefix, INDEX_SUFFIX),
    display: `${schema}.${prefix}${TABLE_SUFFIX}`,
  };
}

/**
 * The statements that create the table, each idempotent. One row per counter: the rule, the counter's tag (a
 * hash of the key's values, never the values), the algorithm's state as JSON, and when it expires (epoch ms on
 * the store's clock; -Infinity for a row made only to be locked), and the version its latest write left (the
 * writing transaction's id; 0 for a row made only to be locked), which the one-round-trip path checks. The index serves the expiry sweep.
 */
export function createTableSql(table: TableName): string {
  return [
    // Serialises concurrent migrations (gateways starting together with createTable): CREATE ... IF NOT EXISTS
    // alone can still collide in the catalog.
    `SELECT pg_advisory_xact_lock(hashtext(${literalOf(table.display)}))`,
    ...(table.schema === '"public"' ? [] : [`CREATE SCHEMA IF NOT EXISTS ${table.schema}`]),
    `CREATE TABLE IF NOT EXISTS ${table.qualified} (
  rule text NOT NULL,
  tag text NOT NULL,
  state jsonb,
  expires_at double precision NOT NULL,
  version bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (rule, tag)
)`,
    // Tables made before versions (0.x): the column added in place (a default, so no rewrite of the table).
    `ALTER TABLE ${table.qualified} ADD COLUMN IF NOT EXISTS version bigint NOT NULL DEFAULT 0`,
    `CREATE INDEX IF NOT EXISTS ${table.expiryIndex} ON ${table.qualified} (expires_at)`,
  ].join(';\n');
}

/** A validated identifier's text as a SQL string literal (it holds no quote: see IDENTIFIER). */
function literalOf(text: string): string {
  return `'${text}'`;
}
