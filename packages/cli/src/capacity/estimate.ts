import type { CompiledRule, Descriptors, Lists } from '@sluice/core';
import type { CompiledRules } from '@sluice/core/store';
import {
  BAN_STATE_BYTES,
  CALL_US,
  CLUSTER_SLOTS,
  COALESCED_CALLS_PER_REQUEST,
  CPU_US_PER_CALL,
  CPU_US_PER_CHECK,
  HOT_KEY_PER_SECOND,
  MARKER_BYTES,
  REDIS_FIGURES,
  SOURCE_SCRIPT_US_PER_CHECK,
  slidingLogBytes,
} from './figures.js';

/** What a capacity estimate starts from. */
export interface CapacityInput {
  readonly rules: CompiledRules;
  /** Peak requests per second over the whole fleet. */
  readonly rps: number;
  /** Distinct clients active within a window (API keys, IPs, ...), spread evenly. */
  readonly keys: number;
  /** A typical request's descriptors, to choose the rules that apply; undefined: every rule applies. */
  readonly descriptors?: Descriptors;
  /** The lists the rules name, for matching `descriptors` (a list rule not given one matches nothing). */
  readonly lists?: Lists;
  /**
   * Descriptors whose value differs from client to client (ip, api_key); a rule keyed only on others (a tenant
   * given on the command line) has one key. Undefined: every key descriptor varies.
   */
  readonly varying?: ReadonlySet<string>;
  /** Memory one primary may give the limiter, bytes. */
  readonly shardMemory: number;
  /** Share of a primary's core the script may use at peak (0.5: half load). */
  readonly cpuShare: number;
}

/** One rule's share of the load. */
export interface RuleLoad {
  readonly rule: string;
  readonly algorithm: string;
  /** Counter keys it holds: one per client (or one for a global rule), times its shards. */
  readonly redisKeys: number;
  readonly bytesPerKey: number;
  /** Ban state keys at most, with `ban`: one per client key (its violations, ban and ban count). */
  readonly banKeys: number;
  /** Idempotency markers alive at most, with `idempotent`: one per charged request within `idempotent`. */
  readonly markerKeys: number;
  /** Its counters, ban states and markers together. */
  readonly memoryBytes: number;
  /** Script time of its check, µs per request. */
  readonly usPerCheck: number;
  /** Increments a second on its busiest key. */
  readonly perKeyPerSecond: number;
}

/** Redis CPU of a request (or the cores of the peak) by how its calls go. */
export interface RedisCpu {
  readonly coalesced: number;
  readonly uncoalesced: number;
  readonly cluster: number;
}

/** The estimate `sluice capacity` prints. */
export interface CapacityEstimate {
  readonly rps: number;
  readonly keys: number;
  /** Rules in Redis that apply to the request (scope: local rules count in process memory, not here). */
  readonly rules: readonly RuleLoad[];
  /** Rules left out: local scope, deny and allow rules (they count nothing), or not matching the descriptors. */
  readonly skipped: readonly string[];
  /** Every key: counters, ban states and idempotency markers. */
  readonly redisKeys: number;
  readonly memoryBytes: number;
  /** Script calls a second at most (each request alone, `coalesce: false`): one per request on one Redis. */
  readonly callsPerSecond: number;
  /** The same on a Cluster: one call per slot group of the request (checks on the same tag share one). */
  readonly clusterCallsPerSecond: number;
  /** Script time per request, µs, and per second of wall time (1 = one core busy). */
  readonly scriptUsPerRequest: number;
  readonly scriptCoresBusy: number;
  /**
   * Redis CPU per request, µs (the whole server's, INFO cpu), extrapolated from the measured run (figures.ts,
   * CAPACITY_RUN): one server with calls coalesced as measured, one server with one call per request
   * (`coalesce: false`, or a gateway with one request in flight at a time), and a Cluster, where a request's
   * checks on per-client keys go in one call per slot group (a turn's requests rarely share a client's slot) and
   * those on global keys coalesce.
   */
  readonly redisCpu: RedisCpu;
  /** The same times the peak rate: cores of Redis CPU busy (1 = one core). */
  readonly redisCores: RedisCpu;
  /** Distinct hash tags (each a slot's worth of keys) and keys per slot on a Cluster. */
  readonly tags: number;
  readonly keysPerSlot: number;
  readonly shardsByCpu: number;
  readonly shardsByMemory: number;
  readonly shardsNeeded: number;
  /** Keys above {@link HOT_KEY_PER_SECOND}: split them with `shards:`. */
  readonly hotKeys: readonly { readonly rule: string; readonly perSecond: number; readonly shards: number }[];
}

function appliesTo(input: CapacityInput): { apply: CompiledRule[]; skipped: string[] } {
  const matched = input.descriptors
    ? new Set(input.rules.match(input.descriptors, Date.now(), input.lists).map((r) => r.name))
    : undefined;
  const apply: CompiledRule[] = [];
  const skipped: string[] = [];
  for (const rule of input.rules.rules) {
    const counts = rule.scope !== 'local' && rule.action === undefined;
    if (!counts || (matched && !matched.has(rule.name))) skipped.push(rule.name);
    else apply.push(rule);
  }
  return { apply, skipped };
}

/** Whether a rule has one key per client, or one in all (global, or keyed only on values every client shares). */
function perClient(rule: CompiledRule, varying: ReadonlySet<string> | undefined): boolean {
  return !rule.global && (varying === undefined || rule.key.some((name) => varying.has(name)));
}

function ruleLoad(rule: CompiledRule, input: CapacityInput): RuleLoad {
  const figures = REDIS_FIGURES[rule.algorithm];
  const shards = rule.shards ?? 1;
  const clients = perClient(rule, input.varying) ? input.keys : 1;
  const perKeyPerSecond = input.rps / clients / shards;
  // A sliding log holds the requests of one window, up to the limit.
  const windowS = rule.params.windowMs / 1000;
  const bytesPerKey =
    rule.algorithm === 'sliding_log'
      ? slidingLogBytes(Math.max(1, Math.min(rule.params.limit, Math.ceil(perKeyPerSecond * windowS))))
      : figures.bytesPerKey;
  const redisKeys = clients * shards;
  const banKeys = rule.ban === undefined ? 0 : clients;
  const markerKeys = markersAlive(rule, input.rps, clients);
  // A key hit more than once per call (coalescing ~64) costs about the hot-key figure.
  const us = (perKeyPerSecond > 1000 ? figures.usHotKey : figures.usNewKey) - CALL_US;
  return {
    rule: rule.name,
    algorithm: rule.algorithm,
    redisKeys,
    bytesPerKey,
    banKeys,
    markerKeys,
    memoryBytes: redisKeys * bytesPerKey + banKeys * BAN_STATE_BYTES + markerKeys * MARKER_BYTES,
    usPerCheck: Math.max(0.5, us),
    perKeyPerSecond,
  };
}

/**
 * Idempotency markers alive at once under a rule with `idempotent`, every request taken to carry an
 * Idempotency-Key: only a charged request leaves one, for `idempotent`, so at most the requests of that time,
 * and at most each key's limit per window over it.
 */
function markersAlive(rule: CompiledRule, rps: number, clients: number): number {
  const lifeMs = rule.idempotentMs;
  if (lifeMs === undefined) return 0;
  const { limit, windowMs } = rule.params;
  return Math.min(Math.ceil((rps * lifeMs) / 1000), clients * limit * Math.ceil(lifeMs / windowMs));
}

/**
 * Hash tags: rules keyed on the same descriptors share one per client; each global rule has its own. Ban states
 * and markers live in their counter's tag.
 */
function tagCount(rules: readonly CompiledRule[], input: CapacityInput): number {
  const keySets = new Map<string, number>();
  let tags = 0;
  for (const rule of rules) {
    if (rule.global) tags += rule.shards ?? 1;
    else keySets.set(JSON.stringify(rule.key), perClient(rule, input.varying) ? input.keys : 1);
  }
  for (const count of keySets.values()) tags += count;
  return tags;
}

/** Groups of a request's checks that share a slot: one per key descriptor set, one per global rule. */
function slotGroups(rules: readonly CompiledRule[]): number {
  return new Set(rules.map((rule) => (rule.global ? `global:${rule.name}` : JSON.stringify(rule.key)))).size;
}

/**
 * Redis CPU per request from the measured run: each check's script time scaled to the server's CPU per check of
 * the run's rules, plus the server's CPU per call times the calls a request makes.
 */
function redisCpuOf(rules: readonly RuleLoad[], apply: readonly CompiledRule[]): RedisCpu {
  if (rules.length === 0) return { coalesced: 0, uncoalesced: 0, cluster: 0 };
  const checks = rules.reduce(
    (sum, r) => sum + (CPU_US_PER_CHECK * r.usPerCheck) / SOURCE_SCRIPT_US_PER_CHECK,
    0,
  );
  const clientGroups = slotGroups(apply.filter((rule) => !rule.global));
  const globalGroups = slotGroups(apply) - clientGroups;
  return {
    coalesced: checks + CPU_US_PER_CALL * COALESCED_CALLS_PER_REQUEST,
    uncoalesced: checks + CPU_US_PER_CALL,
    cluster: checks + CPU_US_PER_CALL * (clientGroups + globalGroups * COALESCED_CALLS_PER_REQUEST),
  };
}

/**
 * Primaries for CPU: one while one server, coalescing, stays under `cpuShare` of a core; beyond it a Cluster, at
 * its own cost per request (calls per slot group), each primary under `cpuShare`.
 */
function primariesByCpu(cores: RedisCpu, cpuShare: number): number {
  if (cores.coalesced <= cpuShare) return 1;
  return Math.max(2, Math.ceil(cores.cluster / cpuShare));
}

/**
 * Redis memory, script calls and time, Redis CPU, keys per slot and primaries needed, from the measured per-key
 * and per-check figures (figures.ts). Keys are taken as all active at once (the worst case).
 */
export function estimateCapacity(input: CapacityInput): CapacityEstimate {
  const { apply, skipped } = appliesTo(input);
  const rules = apply.map((rule) => ruleLoad(rule, input));
  const redisKeys = rules.reduce((sum, r) => sum + r.redisKeys + r.banKeys + r.markerKeys, 0);
  const memoryBytes = rules.reduce((sum, r) => sum + r.memoryBytes, 0);
  const scriptUsPerRequest =
    rules.length === 0 ? 0 : CALL_US + rules.reduce((sum, r) => sum + r.usPerCheck, 0);
  const scriptCoresBusy = (input.rps * scriptUsPerRequest) / 1e6;
  const redisCpu = redisCpuOf(rules, apply);
  const cores = (us: number) => (input.rps * us) / 1e6;
  const redisCores = {
    coalesced: cores(redisCpu.coalesced),
    uncoalesced: cores(redisCpu.uncoalesced),
    cluster: cores(redisCpu.cluster),
  };
  const tags = tagCount(apply, input);
  const shardsByCpu = primariesByCpu(redisCores, input.cpuShare);
  const shardsByMemory = Math.max(1, Math.ceil(memoryBytes / input.shardMemory));
  const hotKeys = rules
    .filter((r) => r.perKeyPerSecond > HOT_KEY_PER_SECOND)
    .map((r) => ({
      rule: r.rule,
      perSecond: r.perKeyPerSecond,
      shards: Math.ceil(r.perKeyPerSecond / HOT_KEY_PER_SECOND),
    }));
  return {
    rps: input.rps,
    keys: input.keys,
    rules,
    skipped,
    redisKeys,
    memoryBytes,
    callsPerSecond: apply.length === 0 ? 0 : input.rps,
    clusterCallsPerSecond: input.rps * slotGroups(apply),
    scriptUsPerRequest,
    scriptCoresBusy,
    redisCpu,
    redisCores,
    tags,
    keysPerSlot: redisKeys / Math.max(1, Math.min(CLUSTER_SLOTS, tags)),
    shardsByCpu,
    shardsByMemory,
    shardsNeeded: Math.max(shardsByCpu, shardsByMemory),
    hotKeys,
  };
}
