import { parseCommandArgs, stringOption } from '../args.js';
import { type Command, EXIT, type Io, UsageError } from '../io.js';
import { redactUrl } from '../redis.js';

/** What the command takes from @sluice/postgres (an optional peer: loaded only here, by a name tsc does not resolve). */
interface PostgresModule {
  migrate(options: { connectionString: string; schema?: string; tablePrefix?: string }): Promise<string>;
}

const POSTGRES_PACKAGE = '@sluice/postgres';

/** @sluice/postgres, or undefined (said on stderr, with how to install it) when it is not installed. */
async function loadPostgres(io: Io): Promise<PostgresModule | undefined> {
  try {
    return (await import(POSTGRES_PACKAGE)) as PostgresModule;
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code !== 'ERR_MODULE_NOT_FOUND') throw error;
    io.err('migrate needs @sluice/postgres; install it with: npm install @sluice/postgres');
    return undefined;
  }
}

/** `sluice migrate --postgres URL`: creates PostgresStore's table, the step before the first gateway starts. */
export const migrateCommand: Command = {
  name: 'migrate',
  summary: "create the PostgresStore's table (schema and table prefix of your choice)",
  help: `Usage: sluice migrate --postgres <url> [--schema <name>] [--table-prefix <prefix>]

Creates the schema (when not public) and the table PostgresStore counts in, <prefix>counters, with its
expiry index, and the audit trail's append-only <prefix>audit. Idempotent: run it at each deploy. Run it as a
role allowed to create tables; the gateways then need only SELECT, INSERT, UPDATE and DELETE on the counters,
SELECT and INSERT on the audit table (and USAGE on its sequence).

Example:
  sluice migrate --postgres postgres://app@10.0.0.7:5432/app --schema limits

Options:
  --postgres <url>          postgres://[user[:password]@]host[:port]/database (required)
  --schema <name>           the table's schema; default public
  --table-prefix <prefix>   the table is <prefix>counters; default sluice_
  -h, --help                show this help

Exit codes: 0 created (or already there), 1 PostgreSQL failure, 2 usage error or @sluice/postgres not installed.`,
  async run(args, io) {
    const parsed = parseCommandArgs(args, {
      postgres: { type: 'string' },
      schema: { type: 'string' },
      'table-prefix': { type: 'string' },
    });
    if (parsed.positionals.length > 0) throw new UsageError('migrate takes no positional arguments');
    const url = stringOption(parsed, 'postgres');
    if (url === undefined) throw new UsageError('migrate needs --postgres <url>');
    const schema = stringOption(parsed, 'schema');
    const tablePrefix = stringOption(parsed, 'table-prefix');
    const postgres = await loadPostgres(io);
    if (postgres === undefined) return EXIT.usage;
    try {
      const table = await postgres.migrate({
        connectionString: url,
        ...(schema === undefined ? {} : { schema }),
        ...(tablePrefix === undefined ? {} : { tablePrefix }),
      });
      io.out(`${table} is ready in ${redactUrl(url)}`);
      return EXIT.ok;
    } catch (error) {
      if ((error as { code?: unknown }).code === 'ERR_SLUICE_CONFIG')
        throw new UsageError((error as Error).message);
      io.err(
        `migrate in ${redactUrl(url)} failed: ${error instanceof Error ? error.message : String(error)}`,
      );
      return EXIT.findings;
    }
  },
};
