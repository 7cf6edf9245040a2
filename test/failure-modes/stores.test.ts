/**
 * The README's "Failure modes" promises for a store outage, checked together against every remote store kind
 * (sites.ts) and every outage shape: unreachable from start-up, killed mid-run, hung (SIGSTOP). For each:
 * - nothing is admitted silently: every decision that skipped the store is marked failed open, counted in the
 *   metrics, and the episode is logged once (SLUICE_STORE_UNREACHABLE), its end once (SLUICE_STORE_RECOVERED);
 * - an outage costs a request little: no wait on a hung store past a few hundred ms, and after the first second
 *   of any shape a few ms per check (the exact figures are bench/outage.ts's; these bounds only catch a wait);
 * - counting resumes soon after the store is back.
 * Requests go one after another, as a client retrying in a loop sends them.
 */
import {
  combineObservers,
  compileRules,
  createLimiter,
  type Decision,
  type Limiter,
  type Observer,
} from '@sluice/core';
import { prometheusObserver } from '@sluice/prometheus';
import { afterEach, describe, expect, it } from 'vitest';
import { type Site, STORE_KINDS, type StoreKind } from './sites.js';

const RULES = compileRules({
  domain: 'failure_modes',
  rules: [{ name: 'per_key', key: ['api_key'], limit: { requests: 100_000, per: '60s' } }],
});

/** The longest a check may wait on a hung store (target 300 ms; room for a loaded machine). */
const HUNG_BOUND_MS = 700;
/** After the first second of an outage: the slowest check (target 25 ms) and the median (target 5 ms). */
const LATER_MAX_MS = 250;
const LATER_MEDIAN_MS = 5;
/** The first check of a store unreachable from start-up waits at most the patient limit (1 s), with room. */
const FIRST_WAIT_MS = 1800;
/** How soon after the store is back a check must be counted again (target 1 s; room for a loaded machine). */
const RESUME_WITHIN_MS = 3000;

interface Checked {
  /** ms since the run began. */
  readonly at: number;
  readonly ms: number;
  readonly decision: Decision;
}

interface Harness {
  readonly site: Site;
  readonly limiter: Limiter;
  readonly notices: string[];
  readonly metrics: () => Promise<string>;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function harness(kind: StoreKind, up: boolean): Promise<Harness> {
  const notices: string[] = [];
  const logger = { warn: (message: string) => void notices.push(message) };
  const site = await kind.site(up, logger);
  // Stopped even when a step below throws: a server left running would outlive the test run.
  cleanups.push(() => site.close());
  const prometheus = prometheusObserver();
  const observer: Observer = combineObservers(prometheus);
  const limiter = createLimiter({ rules: RULES, store: site.store, observer, logger });
  cleanups.push(() => limiter.close());
  return { site, limiter, notices, metrics: () => prometheus.metrics() };
}

/** Checks one after another, 5 ms apart, for `forMs`; `each` after every check. */
async function drive(limiter: Limiter, forMs: number, each: () => void = () => {}): Promise<Checked[]> {
  const checked: Checked[] = [];
  const start = performance.now();
  while (performance.now() - start < forMs) {
    const sent = performance.now();
    const decision = await limiter.check({ api_key: 'sk_failure_modes' });
    const done = performance.now();
    checked.push({ at: sent - start, ms: done - sent, decision });
    each();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return checked;
}

/** Checks until one is counted by the store; answers how long that took, ms. */
async function untilCounted(limiter: Limiter): Promise<number> {
  const start = performance.now();
  while (performance.now() - start < RESUME_WITHIN_MS + 1000) {
    const decision = await limiter.check({ api_key: 'sk_failure_modes' });
    if (!decision.failedOpen) return performance.now() - start;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return Number.POSITIVE_INFINITY;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

const FAILED_OPEN = 'sluice_decisions_total{rule="per_key",mode="enforce",outcome="failed_open"}';

/** What every outage promises, whatever its shape, over the checks made while it lasted. */
async function expectMarkedAndLogged(h: Harness, during: readonly Checked[], before: Mark) {
  expect(during.length).toBeGreaterThan(20);
  const unmarked = during.filter((c) => !c.decision.failedOpen);
  expect(unmarked, 'a decision that skipped the store is marked failed open').toEqual([]);
  for (const { decision } of during) {
    expect(decision.allowed).toBe(true);
    expect(decision.results[0]?.failed).toBe(true);
  }
  expect(sample(await h.metrics(), FAILED_OPEN)).toBe(during.length + before.failedOpen);
  const episodes = h.notices.slice(before.notices).filter((n) => n.includes('SLUICE_STORE_UNREACHABLE'));
  expect(episodes, h.notices.join('\n')).toHaveLength(1);
  expect(episodes[0]).not.toContain('sk_failure_modes');
}

/** Where the metrics and the log stood when an outage began. */
interface Mark {
  readonly failedOpen: number;
  readonly notices: number;
}

async function mark(h: Harness): Promise<Mark> {
  return { failedOpen: sample(await h.metrics(), FAILED_OPEN), notices: h.notices.length };
}

/** The checks after the outage's first second cost a few ms. */
function expectCheapAfterFirstSecond(during: readonly Checked[], outageAt: number) {
  const later = during.filter((c) => c.at - outageAt >= 1000).map((c) => c.ms);
  expect(later.length).toBeGreaterThan(20);
  expect(median(later)).toBeLessThanOrEqual(LATER_MEDIAN_MS);
  expect(Math.max(...later)).toBeLessThanOrEqual(LATER_MAX_MS);
}

/** The store answers (a first connection, a table made): checks are counted. */
async function counting(h: Harness) {
  expect(await untilCounted(h.limiter)).toBeLessThanOrEqual(RESUME_WITHIN_MS);
  const before = await drive(h.limiter, 300);
  expect(before.filter((c) => c.decision.failedOpen)).toEqual([]);
}

/** The store is back: checks are counted again soon, the recovery logged once. */
async function expectResumes(h: Harness, before: Mark) {
  expect(await untilCounted(h.limiter)).toBeLessThanOrEqual(RESUME_WITHIN_MS);
  const [a, b] = [
    await h.limiter.check({ api_key: 'sk_failure_modes' }),
    await h.limiter.check({ api_key: 'sk_failure_modes' }),
  ];
  expect(a.failedOpen || b.failedOpen).toBe(false);
  expect(b.remaining).toBe(a.remaining - 1);
  const recovered = h.notices.slice(before.notices).filter((n) => n.includes('SLUICE_STORE_RECOVERED'));
  expect(recovered).toHaveLength(1);
  expect(h.limiter.health().healthy).toBe(true);
}

describe.each(STORE_KINDS.map((kind) => [kind.name, kind] as const))('%s: failure modes', (_name, kind) => {
  it('unreachable at start-up: marked, logged once, cheap after the first second, resumes', async () => {
    const h = await harness(kind, false);
    const before = await mark(h);
    const breaker = new Set<string>();
    const during = await drive(h.limiter, 2000, () => breaker.add(h.site.store.health?.().breaker ?? ''));
    expect(during[0]?.ms).toBeLessThanOrEqual(FIRST_WAIT_MS);
    await expectMarkedAndLogged(h, during, before);
    expectCheapAfterFirstSecond(during, 0);
    // The breaker behaves as in an outage that began later: it opened.
    expect([...breaker]).toContain('open');
    expect(h.limiter.health()).toMatchObject({ healthy: false, connected: false });
    await h.site.start();
    await expectResumes(h, before);
  }, 60_000);

  it('killed mid-run: marked, logged once, cheap after the first second, resumes', async () => {
    const h = await harness(kind, true);
    await counting(h);
    const before = await mark(h);
    await h.site.kill();
    const during = await drive(h.limiter, 2000);
    await expectMarkedAndLogged(h, during, before);
    expectCheapAfterFirstSecond(during, 0);
    await h.site.start();
    await expectResumes(h, before);
  }, 60_000);

  it('hung (SIGSTOP): no check waits long, marked, logged once, resumes', async () => {
    const h = await harness(kind, true);
    await counting(h);
    const before = await mark(h);
    h.site.pause();
    const during = await drive(h.limiter, 2000);
    expect(Math.max(...during.map((c) => c.ms))).toBeLessThanOrEqual(HUNG_BOUND_MS);
    await expectMarkedAndLogged(h, during, before);
    expectCheapAfterFirstSecond(during, 0);
    h.site.resume();
    await expectResumes(h, before);
  }, 60_000);
});
