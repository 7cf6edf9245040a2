import { createHash } from 'node:crypto';
import { userInfo } from 'node:os';
import {
  type AuditEntry,
  type AuditLog,
  type AuditRecord,
  type AuditValue,
  parseDuration,
} from '@sluice/core';
import { AUDIT_KINDS, type AuditKind, type AuditQuery } from '@sluice/core/store';
import { countOption, listOption, type ParsedArgs, parseCommandArgs, stringOption } from '../args.js';
import { type Command, EXIT, type Io, UsageError } from '../io.js';
import { connectRedis, loadRedisModules, redactUrl } from '../redis.js';

/** Who did it, when `--by` is not given: the OS user running the command. */
export function defaultActor(): string {
  try {
    return userInfo().username;
  } catch {
    // No passwd entry for the uid (some containers).
    return process.env.USER ?? process.env.LOGNAME ?? `uid ${process.getuid?.() ?? 'unknown'}`;
  }
}

/** `--by NAME`, checked, or the OS user. */
export function actorOption(parsed: ParsedArgs): string {
  const by = stringOption(parsed, 'by');
  if (by !== undefined && by.trim() === '') throw new UsageError('--by needs a name');
  return by ?? defaultActor();
}

/** The help line of `--by`, its description at `width`, for the commands that write the audit trail. */
export const byHelp = (width: number): string =>
  `${'--by <name>'.padEnd(width)}who does it, for the audit trail; default the OS user`;

/** The first 12 hex digits of the sha256 of a pushed file: which text it was, beside the compiled version. */
export function textHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 12);
}

/**
 * Appends an operator's act to the store's audit log; false (said on stderr) when it could not be written, so
 * that the command exits 1: the act was done, its record is missing.
 */
export async function recordAct(log: AuditLog, entry: AuditEntry, where: string, io: Io): Promise<boolean> {
  try {
    await log.append(entry);
    return true;
  } catch (error) {
    io.err(
      `the audit entry (${entry.kind} by ${entry.actor}) was not written to ${where}: ` +
        `${error instanceof Error ? error.message : String(error)}`,
    );
    return false;
  }
}

/** What `sluice push` publishes, as the audit trail records it. */
export interface PushedVersion {
  readonly domain: string;
  readonly version: string;
  readonly serial: number;
  readonly receivers: number;
}

/** A push's entry: the version published, the file's hash and name, the serial, and who pushed. */
export function pushEntry(pushed: PushedVersion, text: string, file: string, actor: string): AuditEntry {
  return {
    at: Date.now(),
    kind: 'push',
    actor,
    domain: pushed.domain,
    rule: null,
    details: {
      version: pushed.version,
      hash: textHash(text),
      serial: pushed.serial,
      source: file,
      receivers: pushed.receivers,
    },
  };
}

/** `--since`: a duration back from now (`1h`, `7d`) or an ISO 8601 time. */
function sinceOption(parsed: ParsedArgs, now: number): number | undefined {
  const text = stringOption(parsed, 'since');
  if (text === undefined) return undefined;
  if (/^\d+[a-z]+$/.test(text)) {
    try {
      return now - parseDuration(text);
    } catch (error) {
      throw new UsageError(`--since: ${(error as Error).message}`);
    }
  }
  const at = Date.parse(text);
  if (Number.isNaN(at))
    throw new UsageError(`--since must be a duration (1h, 7d) or an ISO 8601 time, got "${text}"`);
  return at;
}

/** `--kind push,ban` (repeatable), each kind checked. */
function kindsOption(parsed: ParsedArgs): AuditKind[] | undefined {
  const kinds = listOption(parsed, 'kind').flatMap((text) => text.split(',').map((kind) => kind.trim()));
  if (kinds.length === 0) return undefined;
  for (const kind of kinds)
    if (!AUDIT_KINDS.includes(kind as AuditKind))
      throw new UsageError(`--kind: no kind "${kind}" (kinds: ${AUDIT_KINDS.join(', ')})`);
  return kinds as AuditKind[];
}

/** A detail as the text listing shows it. */
function showValue(value: AuditValue): string {
  if (Array.isArray(value)) return value.length === 0 ? '-' : value.join(',');
  return value === null ? '-' : String(value);
}

/** One entry, one line: time, kind, actor, domain, rule, then its details as name=value. */
export function formatRecord(record: AuditRecord): string {
  const details = Object.entries(record.details).map(([name, value]) => `${name}=${showValue(value)}`);
  return [
    new Date(record.at).toISOString(),
    record.kind.padEnd(7),
    record.actor,
    record.domain ?? '-',
    record.rule ?? '-',
    ...details,
  ].join('  ');
}

/** What PostgresStore the command opens (an optional peer, loaded by a name tsc does not resolve). */
interface PostgresModule {
  PostgresStore: new (options: {
    connectionString: string;
    schema?: string;
    tablePrefix?: string;
    sweepEveryMs: false;
  }) => { readonly audit: AuditLog; close(): Promise<void> };
}
const POSTGRES_PACKAGE = '@sluice/postgres';

/** An audit log to read, and how to let it go; undefined when its package is missing (said on stderr). */
interface OpenLog {
  readonly log: AuditLog;
  readonly where: string;
  close(): Promise<void>;
}

async function openPostgres(parsed: ParsedArgs, url: string, io: Io): Promise<OpenLog | undefined> {
  let postgres: PostgresModule;
  try {
    postgres = (await import(POSTGRES_PACKAGE)) as PostgresModule;
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code !== 'ERR_MODULE_NOT_FOUND') throw error;
    io.err('audit --postgres needs @sluice/postgres; install it with: npm install @sluice/postgres');
    return undefined;
  }
  const schema = stringOption(parsed, 'schema');
  const tablePrefix = stringOption(parsed, 'table-prefix');
  const store = new postgres.PostgresStore({
    connectionString: url,
    sweepEveryMs: false,
    ...(schema === undefined ? {} : { schema }),
    ...(tablePrefix === undefined ? {} : { tablePrefix }),
  });
  return { log: store.audit, where: redactUrl(url), close: () => store.close() };
}

async function openRedis(parsed: ParsedArgs, url: string, io: Io): Promise<OpenLog | undefined> {
  const modules = await loadRedisModules('audit', io);
  if (modules === undefined) return undefined;
  const client = connectRedis(modules, url, parsed.values.cluster === true);
  const prefix = stringOption(parsed, 'prefix');
  const store = new modules.redis.RedisStore({ client, breaker: false, ...(prefix ? { prefix } : {}) });
  try {
    await client.connect();
  } catch (error) {
    await store.close();
    client.disconnect();
    throw error;
  }
  return {
    log: store.audit,
    where: redactUrl(url),
    close: async () => {
      await store.close();
      client.disconnect();
    },
  };
}

/** `sluice audit --redis URL | --postgres URL [filters]`: the audit trail, oldest first. */
export const auditCommand: Command = {
  name: 'audit',
  summary: 'list the audit trail: pushes, reloads, mode and rollout changes, bans and unbans',
  help: `Usage: sluice audit (--redis <url> | --postgres <url>) [--since <1h|ISO time>] [--kind <k,k>]
       [--rule <name>] [--domain <name>] [--limit <n>] [--json]

Lists the audit trail the store keeps, oldest first: each rule push (version, file hash, who: sluice push
--by), each reload a gateway took (the versions before and after, rules added, removed, changed), each
change of a rule's mode or rollout found by comparing the tables, each ban a gateway started and each
unban (the rule and the key's hashed tag, never the key). Gateways write theirs with the auditTrail
observer of @sluice/core; sluice push and unban write theirs.

Example:
  sluice audit --redis redis://10.0.0.5:6379 --since 24h --kind push,mode,rollout

Options:
  --redis <url>          read the RedisStore's stream (redis://[user:password@]host:port[/db])
  --cluster              the --redis URL is a node of a Redis Cluster
  --prefix <prefix>      the RedisStore's key prefix; default sluice
  --postgres <url>       read the PostgresStore's <prefix>audit table instead
  --schema <name>        its schema; default public
  --table-prefix <p>     its table prefix; default sluice_
  --since <when>         entries from this long ago (30m, 1h, 7d) or this ISO 8601 time
  --kind <kinds>         only these kinds, comma-separated or repeated: ${AUDIT_KINDS.join(', ')}
  --rule <name>          only entries about this rule
  --domain <name>        only entries of this rules domain
  --limit <n>            the newest n matching entries; default 1000
  --json                 one JSON object per line, as stored, with its id
  -h, --help             show this help

Exit codes: 0 listed (none matching included), 1 store failure, 2 usage error or the store's packages not
installed.`,
  async run(args, io) {
    const parsed = parseCommandArgs(args, {
      redis: { type: 'string' },
      cluster: { type: 'boolean' },
      prefix: { type: 'string' },
      postgres: { type: 'string' },
      schema: { type: 'string' },
      'table-prefix': { type: 'string' },
      since: { type: 'string' },
      kind: { type: 'string', multiple: true },
      rule: { type: 'string' },
      domain: { type: 'string' },
      limit: { type: 'string' },
      json: { type: 'boolean' },
    });
    if (parsed.positionals.length > 0) throw new UsageError('audit takes no positional arguments');
    const redis = stringOption(parsed, 'redis');
    const postgres = stringOption(parsed, 'postgres');
    if ((redis === undefined) === (postgres === undefined))
      throw new UsageError('audit needs one of --redis <url> or --postgres <url>');
    const query = queryOf(parsed);
    const url = (redis ?? postgres)!;
    let open: OpenLog | undefined;
    try {
      open = redis !== undefined ? await openRedis(parsed, url, io) : await openPostgres(parsed, url, io);
      if (open === undefined) return EXIT.usage;
      const records = await open.log.read(query);
      for (const record of records)
        io.out(parsed.values.json ? JSON.stringify(record) : formatRecord(record));
      if (!parsed.values.json && records.length === 0) io.err(`no audit entries match in ${redactUrl(url)}`);
      return EXIT.ok;
    } catch (error) {
      io.err(`audit in ${redactUrl(url)} failed: ${error instanceof Error ? error.message : String(error)}`);
      return EXIT.findings;
    } finally {
      await open?.close();
    }
  },
};

/** The filters of the command line as a query. */
function queryOf(parsed: ParsedArgs): AuditQuery {
  const since = sinceOption(parsed, Date.now());
  const kinds = kindsOption(parsed);
  const rule = stringOption(parsed, 'rule');
  const domain = stringOption(parsed, 'domain');
  return {
    limit: countOption(parsed, 'limit', 1000),
    ...(since === undefined ? {} : { since }),
    ...(kinds === undefined ? {} : { kinds }),
    ...(rule === undefined ? {} : { rule }),
    ...(domain === undefined ? {} : { domain }),
  };
}
