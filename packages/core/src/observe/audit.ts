import { hostname } from 'node:os';
import { ConfigError } from '../base/errors.js';
import { checkOptionNames } from '../base/optionNames.js';
import type { CompiledRule, CompiledRules, Descriptors } from '../rules/contract.js';
import type { AuditEntry, AuditLog } from '../store/audit.js';
import { tagFor } from '../store/tags.js';
import { reloadEntries } from './auditDiff.js';
import type { Decision, Observer } from './contract.js';
import type { DecisionLogger } from './decisionLog.js';

/** Options of {@link auditTrail}. */
export interface AuditTrailOptions {
  /** The limiter's store: its `audit` log keeps the entries (MemoryStore, RedisStore, PostgresStore have one). */
  readonly store?: { readonly audit?: AuditLog };
  /** Each entry is also written here (`event: 'sluice.audit'`): give the decision log's logger. */
  readonly logger?: DecisionLogger;
  /** Who this process is, in its entries; default `<hostname>/<pid>`. */
  readonly actor?: string;
  /** The limiter's `keySecret`, so that a ban's tag is the counter tag `sluice explain` shows. */
  readonly keySecret?: string;
  /** Milliseconds since the epoch; default `Date.now`. */
  readonly clock?: () => number;
  /** Ban entries written per minute at most; the next one written says how many were left out. Default 60. */
  readonly maxBansPerMinute?: number;
}

/** An Observer writing the audit trail, and `flush()` to wait for the entries handed to the store. */
export interface AuditTrail extends Observer {
  /** Resolves once every entry so far is written (or its failure reported): before a process exits, say. */
  flush(): Promise<void>;
}

const OPTION_NAMES: readonly (keyof AuditTrailOptions)[] = [
  'store',
  'logger',
  'actor',
  'keySecret',
  'clock',
  'maxBansPerMinute',
];

const MINUTE_MS = 60_000;

/** The words of an entry in a log line. */
function describe(entry: AuditEntry): string {
  const rule = entry.rule === null ? '' : ` ${entry.rule}`;
  return `sluice audit: ${entry.kind}${rule} by ${entry.actor}`;
}

/**
 * Writes failing, then written again: a notice at each turn (`SLUICE_AUDIT_UNWRITTEN`, `SLUICE_AUDIT_WRITTEN`
 * with the count left unwritten), never one per entry.
 */
function failureEpisodes(logger: DecisionLogger | undefined) {
  let unwritten = 0;
  const warn = (code: string, msg: string): void => {
    if (logger) logger.warn({ event: 'sluice.audit_store', code, msg });
    else console.warn(msg);
  };
  return {
    written(): void {
      if (unwritten === 0) return;
      warn(
        'SLUICE_AUDIT_WRITTEN',
        `SLUICE_AUDIT_WRITTEN: audit entries written again; ${unwritten} were not`,
      );
      unwritten = 0;
    },
    failed(error: unknown): void {
      if (unwritten++ > 0) return;
      const reason = error instanceof Error ? error.message : String(error);
      warn(
        'SLUICE_AUDIT_UNWRITTEN',
        `SLUICE_AUDIT_UNWRITTEN: audit entries not written to the store: ${reason}`,
      );
    },
  };
}

/**
 * An Observer that keeps the audit trail: each rule table the limiter takes (the reload, and each rule whose mode
 * or rollout changed against the table before), each ban an enforced rule starts and each `limiter.unban`, as
 * entries in the store's append-only log and as log lines. A ban names the rule and the key's hashed tag, never
 * the key. Writes never hold up a request: they go out in the background, one at a time in order (each store
 * bounds its time), and a failing store is told once per episode. `sluice push --by` writes the pushes; `sluice audit` lists them all.
 */
export function auditTrail(options: AuditTrailOptions): AuditTrail {
  checkOptionNames('auditTrail', options, OPTION_NAMES);
  const log = options.store?.audit;
  if (options.store !== undefined && log === undefined)
    throw new ConfigError(
      'auditTrail: the store keeps no audit log (MemoryStore, RedisStore, PostgresStore do)',
    );
  if (log === undefined && options.logger === undefined)
    throw new ConfigError('auditTrail needs a store with an audit log, a logger, or both');
  const maxBans = options.maxBansPerMinute ?? 60;
  if (!Number.isSafeInteger(maxBans) || maxBans < 0)
    throw new ConfigError(`auditTrail: maxBansPerMinute must be a whole number, got ${String(maxBans)}`);
  const { logger, keySecret } = options;
  const clock = options.clock ?? Date.now;
  const actor = options.actor ?? `${hostname()}/${process.pid}`;
  const episodes = failureEpisodes(logger);
  // One write at a time, in order: a store with a pool of connections could otherwise reorder them.
  let written: Promise<void> = Promise.resolve();
  let table: CompiledRules | undefined;
  let rulesByName = new Map<string, CompiledRule>();
  let minute = { start: Number.NEGATIVE_INFINITY, written: 0, left: 0 };

  function record(entry: AuditEntry): void {
    logger?.info({ event: 'sluice.audit', msg: describe(entry), ...entry });
    if (log === undefined) return;
    written = written.then(() => log.append(entry)).then(episodes.written, episodes.failed);
  }

  function onBan(rule: string, until: number, descriptors: Descriptors, version: string, at: number): void {
    if (at - minute.start >= MINUTE_MS) minute = { start: at, written: 0, left: minute.left };
    if (minute.written >= maxBans) {
      minute.left++;
      return;
    }
    minute.written++;
    const known = rulesByName.get(rule);
    const tag = known === undefined ? undefined : tagFor(known, descriptors, keySecret);
    const left = minute.left;
    minute.left = 0;
    record({
      at,
      kind: 'ban',
      actor,
      domain: table?.domain ?? null,
      rule,
      details: {
        tag: tag ?? null,
        until: new Date(until).toISOString(),
        version,
        ...(left > 0 ? { unrecorded: left } : {}),
      },
    });
  }

  return {
    onRulesLoaded(rules: CompiledRules): void {
      if (table?.version === rules.version) return;
      for (const entry of reloadEntries(table, rules, { at: clock(), actor })) record(entry);
      table = rules;
      rulesByName = new Map(rules.rules.map((rule) => [rule.name, rule]));
    },
    onDecision(decision: Decision, descriptors: Descriptors): void {
      // A ban starts only with a denial: allowed requests cost one test.
      if (decision.allowed) return;
      for (const result of decision.results)
        if (result.banStarted === true && result.mode === 'enforce')
          onBan(result.rule, result.bannedUntil!, descriptors, decision.version, clock());
    },
    onUnban(rule: string, lifted: boolean, tag: string): void {
      const domain = table?.domain ?? null;
      record({ at: clock(), kind: 'unban', actor, domain, rule, details: { tag, lifted } });
    },
    flush: () => written,
  };
}
