/**
 * The regions tests' app: Fastify with @sluice/fastify in process, one per region, each with its own limiter
 * on its region's store, and the rules every region serves: a regional rule per API key and a global one.
 */
import type { AddressInfo } from 'node:net';
import type { Limiter, Observer, RegionsOptions, RulesInput, Store } from '@sluice/core';
import { rateLimit } from '@sluice/fastify';
import Fastify from 'fastify';
import type { Fleet, Notices, RegionParts } from './fleet.js';
import { type LoadResult, runLoad, Tally } from './load.js';

/** The global rule's name, limit and window in the tests' rules. */
export const GLOBAL_RULE = 'search_global';
export const WINDOW_MS = 1000;

/** A regional rule per API key and a global rule on /search, as every region serves them, per `per`. */
export function searchRules(
  globalLimit: number,
  per = '1s',
  extra: Record<string, unknown> = {},
): RulesInput {
  return {
    domain: 'regions',
    rules: [
      {
        name: 'search_per_key',
        match: { route: '/search' },
        key: ['api_key'],
        limit: { requests: 1000, per },
        algorithm: 'fixed_window',
      },
      {
        name: GLOBAL_RULE,
        match: { route: '/search' },
        key: [],
        global: true,
        limit: { requests: globalLimit, per },
        algorithm: 'fixed_window',
        scope: 'global',
        ...extra,
      },
    ],
  };
}

/** A started app: its URL, its limiter, and how to stop it (the stores stay: they are the fleet's). */
export interface RegionApp {
  readonly url: string;
  readonly limiter: Limiter;
  close(): Promise<void>;
}

/** Options of {@link startRegionApp}. */
export interface RegionAppOptions {
  readonly rules: RulesInput;
  readonly store: Store;
  /** Absent: the same app as a single-region deployment (a global rule counts in `store`). */
  readonly regions?: RegionsOptions;
  readonly observer: Observer;
  readonly notices: Notices;
}

/** Fastify with @sluice/fastify on a free loopback port, serving GET /search. */
export async function startRegionApp(options: RegionAppOptions): Promise<RegionApp> {
  const app = Fastify();
  await app.register(rateLimit, {
    rules: options.rules,
    store: options.store,
    ...(options.regions === undefined ? {} : { regions: options.regions }),
    observer: options.observer,
    logger: options.notices,
  });
  app.get('/search', async () => ({ ok: true }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, limiter: app.rateLimiter, close: () => app.close() };
}

/** API keys a region's clients use in turn, so the regional rule has several counters. */
export const apiKeyHeaders =
  (region: string) =>
  (i: number): Record<string, string> => ({ 'x-api-key': `${region}-key-${i % 10}` });

/** A region serving: its parts, its app, and the count of its decisions. */
export interface ServingRegion {
  readonly parts: RegionParts;
  readonly app: RegionApp;
  readonly tally: Tally;
}

/** One app per region of the fleet, each with its limiter on its region's store and the regions option. */
export async function serveRegions(
  fleet: Fleet,
  rules: RulesInput,
  regions: Partial<RegionsOptions> = {},
): Promise<ServingRegion[]> {
  return Promise.all(
    fleet.regions.map(async (parts) => {
      const tally = new Tally(GLOBAL_RULE, WINDOW_MS);
      const app = await startRegionApp({
        rules,
        store: parts.store,
        regions: { region: parts.plan.name, global: parts.global, ...regions },
        observer: tally.observer,
        notices: parts.notices,
      });
      return { parts, app, tally };
    }),
  );
}

/** Each region's load at its share of `totalRps`, over real HTTP, all at once. */
export function loadRegions(
  serving: readonly ServingRegion[],
  totalRps: number,
  durationMs: number,
): Promise<LoadResult[]> {
  return Promise.all(
    serving.map(({ parts, app }) =>
      runLoad({
        url: app.url,
        rps: totalRps * parts.plan.share,
        durationMs,
        headers: apiKeyHeaders(parts.plan.name),
      }),
    ),
  );
}

/** Every region's admissions in one window of the global rule. */
export interface WindowRow {
  readonly start: number;
  readonly admitted: readonly number[];
  readonly total: number;
  readonly unreachable: readonly number[];
}

/** The windows wholly inside [from, to), each with every region's admissions (tallies in region order). */
export function windowRows(tallies: readonly Tally[], from: number, to: number): WindowRow[] {
  const starts = new Set<number>();
  for (const tally of tallies) for (const [start] of tally.between(from, to)) starts.add(start);
  return [...starts]
    .sort((a, b) => a - b)
    .map((start) => {
      const admitted = tallies.map((t) => t.windows.get(start)?.admitted ?? 0);
      const unreachable = tallies.map((t) => t.windows.get(start)?.unreachable ?? 0);
      return { start, admitted, total: admitted.reduce((a, b) => a + b, 0), unreachable };
    });
}

/** Windows as lines for a failing assertion's message and the test's log: `start us eu ap = total`. */
export function showRows(rows: readonly WindowRow[]): string {
  return rows
    .map(
      (row) => `${new Date(row.start).toISOString().slice(14, 19)} ${row.admitted.join(' ')} = ${row.total}`,
    )
    .join('\n');
}
