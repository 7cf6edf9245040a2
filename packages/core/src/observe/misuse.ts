import type { NoticeLogger } from '../base/notices.js';
import type { CompiledRule, CompiledRules } from '../rules/contract.js';
import type { Store } from '../store/contract.js';

export type { NoticeLogger };

/** Runtime smells about how limiters are built, logged once each with a stable code; silence one with `silence`. */
export const LIMITER_NOTICES = {
  SLUICE_LIMITER_PER_REQUEST:
    'a limiter built per request (inside a handler) counts every request on a fresh counter and never limits. ' +
    'Build the limiter (or the rateLimit() middleware) once, at start-up, and reuse it.',
  SLUICE_STORE_SHARED:
    'two open limiters count the same rule on the same store, so a request that passes both is counted twice. ' +
    'Use one limiter for both (one rateLimit() and its limiter.route()), rename the rule in one of ' +
    'them, or close() the one you replace.',
} as const;

/** A limiter notice code. */
export type LimiterNotice = keyof typeof LIMITER_NOTICES;

/** Limiters built with one rule table within this window count towards the per-request smell. */
export const PER_REQUEST_WINDOW_MS = 60_000;
/** How many limiters with the same rules, built within the window, no app builds at start-up. */
export const PER_REQUEST_THRESHOLD = 50;
/**
 * How many limiters with the same rules in a row, each used for only a check or two before the next was
 * built, betray a limiter built per request: a handful of requests is enough to say so, where
 * PER_REQUEST_THRESHOLD would wait for fifty. Limiters built at start-up are built before any check.
 */
export const SHORT_LIVED_THRESHOLD = 5;
/** Checks a limiter built per request makes (one per request, two with a retry): more is a limiter in use. */
const SHORT_LIVED_CHECKS = 2;

/** One limiter as the watch knows it. */
export interface WatchedLimiter {
  /** Replaces the rules the limiter counts (setRules, a reload). */
  rules(table: CompiledRules): void;
  /** The limiter is closed: its counters no longer count. */
  close(): void;
  /** Counts one check (the engine calls it per decision; a limiter used for few of them is suspect). */
  checked(): void;
}

/** The identity of a rule's counters in a store: its name and its key descriptors. */
function counterId(rule: CompiledRule): string {
  return `${rule.name}|${rule.global ? '' : rule.key.join(',')}`;
}

/** Formats a notice as adapters do: `sluice: <detail> <advice> [CODE]`. */
function noticeText(code: LimiterNotice, detail: string): string {
  return `sluice: ${detail}: ${LIMITER_NOTICES[code]} [${code}]`;
}

/** Open limiters by store, and recent limiter builds by rule version, for the whole process. */
class MisuseWatch {
  /** Store -> counter id -> how many open limiters count it there (a count: never a list that grows). */
  readonly #counting = new WeakMap<Store, Map<string, number>>();
  /** Stores and rule versions already warned about: each smell is logged once. */
  readonly #warnedStores = new WeakSet<Store>();
  readonly #warnedVersions = new Set<string>();
  /** Rule version -> recent builds. */
  readonly #builds = new Map<string, Build[]>();

  /**
   * Registers a limiter built with `table` that counts its `store`-scope rules on `store` and its `local`-scope
   * rules on `localStore`; warns (once) when another open limiter counts the same rule on the same store, or when
   * many limiters are built with the same rules in a short time.
   */
  watch(
    stores: { readonly store: Store; readonly localStore: Store },
    table: CompiledRules,
    logger: NoticeLogger,
    silence: ReadonlySet<string>,
  ): WatchedLimiter {
    let held: [Store, string][] = [];
    const warn = (code: LimiterNotice, detail: string) => {
      if (silence.has(code)) return;
      try {
        logger.warn(noticeText(code, detail));
      } catch {
        // A logger bug must not stop a limiter from starting.
      }
    };
    const take = (rules: CompiledRules) => {
      this.#release(held);
      // Deny and allow rules count nothing, so two limiters sharing them share no counter.
      held = rules.rules
        .filter((rule) => rule.action === undefined)
        .map((rule) => [rule.scope === 'local' ? stores.localStore : stores.store, counterId(rule)]);
      const clash = this.#hold(held);
      if (clash !== undefined) warn('SLUICE_STORE_SHARED', `rule "${clash}" of domain "${rules.domain}"`);
    };
    take(table);
    const build: Build = { at: performance.now(), open: true, checks: 0 };
    const built = this.#built(table.version, build);
    if (built !== undefined)
      warn(
        'SLUICE_LIMITER_PER_REQUEST',
        `${built} limiters were built with the rules of domain "${table.domain}" within a minute`,
      );
    return {
      rules: take,
      checked: () => {
        build.checks++;
      },
      close: () => {
        build.open = false;
        this.#release(held);
        held = [];
      },
    };
  }

  /** Records the limiter's counters; the name of the first rule another limiter already counts on a store not yet warned about. */
  #hold(held: readonly [Store, string][]): string | undefined {
    let clash: string | undefined;
    for (const [store, id] of held) {
      let ids = this.#counting.get(store);
      if (ids === undefined) {
        ids = new Map();
        this.#counting.set(store, ids);
      }
      const holders = ids.get(id) ?? 0;
      if (holders > 0 && clash === undefined && !this.#warnedStores.has(store)) {
        this.#warnedStores.add(store);
        clash = id.slice(0, id.indexOf('|'));
      }
      ids.set(id, holders + 1);
    }
    return clash;
  }

  /** Forgets counters a limiter no longer counts (closed, or its rules replaced). */
  #release(held: readonly [Store, string][]): void {
    for (const [store, id] of held) {
      const ids = this.#counting.get(store);
      const holders = ids?.get(id) ?? 0;
      if (holders <= 1) ids?.delete(id);
      else ids?.set(id, holders - 1);
    }
  }

  /**
   * Counts a build of this rule version; the number built within the window and still open when it crosses
   * the threshold. Closed limiters do not count: a tool that builds, uses and closes one per test case is fine.
   */
  #built(version: string, build: Build): number | undefined {
    if (this.#warnedVersions.has(version)) return undefined;
    const now = build.at;
    // Versions left behind by reloads: forget them once their builds are out of the window.
    for (const [other, builds] of this.#builds)
      if (other !== version && now - (builds.at(-1)?.at ?? 0) >= PER_REQUEST_WINDOW_MS)
        this.#builds.delete(other);
    const recent = (this.#builds.get(version) ?? []).filter(
      (b) => b.open && now - b.at < PER_REQUEST_WINDOW_MS,
    );
    recent.push(build);
    this.#builds.set(version, recent);
    if (recent.length < PER_REQUEST_THRESHOLD && !shortLivedRun(recent)) return undefined;
    this.#warnedVersions.add(version);
    this.#builds.delete(version);
    return recent.length;
  }
}

/** One limiter build: when (ms, monotonic), whether it is still open, and how many checks it made. */
interface Build {
  readonly at: number;
  open: boolean;
  checks: number;
}

/**
 * Whether the builds before the newest one end in SHORT_LIVED_THRESHOLD builds in a row that each made a check
 * or two and were left open: what a limiter built inside a request handler leaves behind.
 */
function shortLivedRun(recent: readonly Build[]): boolean {
  const before = recent.length - 1;
  if (before < SHORT_LIVED_THRESHOLD) return false;
  for (let i = before - SHORT_LIVED_THRESHOLD; i < before; i++) {
    const checks = recent[i]?.checks ?? 0;
    if (checks < 1 || checks > SHORT_LIVED_CHECKS) return false;
  }
  return true;
}

/** The process-wide watch every createLimiter registers with. */
export const misuseWatch = new MisuseWatch();
