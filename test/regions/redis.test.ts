/**
 * Regions on real parts (issue 44): three regions, each a Fastify app with @sluice/fastify on its own
 * redis-server, sharing one global redis-server reached through TCP proxies that add 50, 100 and 150 ms of
 * round trip; traffic skewed 80/15/5 over real HTTP. The global count stays within the guide's bound under
 * sustained load, no request waits on the global store, a partitioned region follows its fallback share and
 * says so, and a restart of the global store costs at most the bound.
 *
 * REGIONS_SOAK_MS sets the sustained run's length (default 40 s; minutes in a long run).
 */
import { RedisStore } from '@sluice/redis';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { randomPrefix, startRedis } from '../support/redis.js';
import {
  apiKeyHeaders,
  GLOBAL_RULE,
  loadRegions,
  type ServingRegion,
  searchRules,
  serveRegions,
  showRows,
  startRegionApp,
  WINDOW_MS,
  windowRows,
} from './apps.js';
import { overAdmissionBound, restartBound } from './bound.js';
import { Fleet, GLOBAL_TIMEOUT_MS, Notices } from './fleet.js';
import { quantile, runLoad, settledLatencies, Tally } from './load.js';

const SOAK_MS = Number(process.env.REGIONS_SOAK_MS ?? 40_000);
/** Requests a second over all regions, and the global limit they exceed. */
const TOTAL_RPS = 150;
const LIMIT = 100;
/** Warm-up left out of the figures: connections, JIT, the first slices. */
const WARM_MS = 3000;

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

async function fleet(): Promise<Fleet> {
  const started = await Fleet.start();
  stops.push(() => started.stop());
  return started;
}

describe('regions on Redis, over HTTP', () => {
  it(
    'holds the global count within the bound under sustained 80/15/5 load, adding no cross-region wait',
    async () => {
      const regions = await fleet();
      const rules = searchRules(LIMIT);
      const serving = await serveRegions(regions, rules);
      stops.push(async () => {
        for (const s of serving) await s.app.close();
      });
      // The same apps as a single-region deployment: every gateway on one local store, no regions.
      const local = await startRedis();
      const localClient = new Redis({ host: local.host, port: local.port });
      stops.push(async () => {
        localClient.disconnect();
        await local.stop();
      });
      const localStore = new RedisStore({ client: localClient, prefix: randomPrefix('s') });
      const singles = await Promise.all(
        serving.map(() =>
          startRegionApp({
            rules,
            store: localStore,
            observer: new Tally(GLOBAL_RULE, WINDOW_MS).observer,
            notices: new Notices(),
          }),
        ),
      );
      stops.push(async () => {
        for (const app of singles) await app.close();
      });

      const from = Date.now() + WARM_MS;
      const [regional, single] = await Promise.all([
        loadRegions(serving, TOTAL_RPS, SOAK_MS),
        Promise.all(
          serving.map(({ parts }, i) =>
            runLoad({
              url: singles[i]!.url,
              rps: TOTAL_RPS * parts.plan.share,
              durationMs: SOAK_MS,
              headers: apiKeyHeaders(`single-${parts.plan.name}`),
            }),
          ),
        ),
      ]);
      const rows = windowRows(
        serving.map((s) => s.tally),
        from,
        Date.now(),
      );
      const bound = overAdmissionBound({ limit: LIMIT, regions: serving.length });
      const over = Math.max(0, ...rows.map((row) => row.total - LIMIT));
      const mean = rows.reduce((sum, row) => sum + row.total, 0) / rows.length;
      const usShare = rows.reduce((sum, row) => sum + row.admitted[0]!, 0) / (mean * rows.length);
      const latency = serving.map(({ parts }, i) => {
        const own = settledLatencies(regional[i]!, WARM_MS);
        const base = settledLatencies(single[i]!, WARM_MS);
        return {
          region: parts.plan.name,
          roundTripMs: 2 * parts.plan.oneWayMs,
          p50: quantile(own, 0.5),
          p99: quantile(own, 0.99),
          singleP50: quantile(base, 0.5),
          singleP99: quantile(base, 0.99),
          requests: own.length,
        };
      });
      console.log(
        `${rows.length} windows of ${LIMIT}: mean ${mean.toFixed(1)}, most over the limit ${over} (bound ${bound}), us share ${(100 * usShare).toFixed(1)}%\n${showRows(rows)}`,
      );
      console.log(latency.map((l) => JSON.stringify(l)).join('\n'));

      expect(rows.length).toBeGreaterThanOrEqual(Math.floor((SOAK_MS - WARM_MS) / WINDOW_MS) - 2);
      for (const row of rows) expect(row.total, showRows(rows)).toBeLessThanOrEqual(LIMIT + bound);
      // Demand is 1.5 times the limit: the regions together spend most of it, the busiest region most.
      expect(mean).toBeGreaterThanOrEqual(0.7 * LIMIT);
      expect(usShare).toBeGreaterThan(0.5);
      // Nothing was decided on a partition share, and no region said it was cut off.
      for (const s of serving) {
        expect(s.tally.reasons.get('global_unreachable') ?? 0).toBe(0);
        expect(s.parts.notices.count('SLUICE_GLOBAL_UNREACHABLE')).toBe(0);
        expect(s.tally.count('slice')).toBeGreaterThan(0);
      }
      // No cross-region wait: each region's latency is the single-region deployment's (generous margins
      // for a shared machine); a wait on the global store would add its whole round trip to each request.
      for (const l of latency) {
        expect(l.requests).toBeGreaterThan(0);
        expect(l.p50, JSON.stringify(l)).toBeLessThan(l.singleP50 + Math.min(10, l.roundTripMs / 2));
        expect(l.p99, JSON.stringify(l)).toBeLessThanOrEqual(Math.max(2 * l.singleP99, l.singleP99 + 25));
      }
    },
    SOAK_MS + 60_000,
  );

  it('a partitioned region follows its fallback share, says so once, and rejoins without a burst', async () => {
    const regions = await fleet();
    const serving = await serveRegions(regions, searchRules(LIMIT));
    stops.push(async () => {
      for (const s of serving) await s.app.close();
    });
    const eu = serving[1]!;
    const began = Date.now();
    const load = loadRegions(serving, TOTAL_RPS, 32_000);
    await sleep(10_000);

    // The link to the global store goes dark (bytes dropped both ways), and eu's demand doubles.
    eu.parts.proxy.blackhole(true);
    const cutAt = Date.now();
    const surge = runLoad({
      url: eu.app.url,
      rps: TOTAL_RPS * eu.parts.plan.share,
      durationMs: 10_000,
      headers: apiKeyHeaders('eu-surge'),
    });
    await sleep(4000);
    const during = globalBudget(eu);
    const surged = await surge;
    // The link comes back: connections dropped meanwhile are cut (as a NAT or a load balancer would).
    eu.parts.proxy.resetAll();
    eu.parts.proxy.blackhole(false);
    const healAt = Date.now();
    const [results] = await Promise.all([load]);
    const after = globalBudget(eu);
    const ended = Date.now();

    const tallies = serving.map((s) => s.tally);
    const fallback = during.deciding;
    const linked = windowRows(tallies, began + WARM_MS, cutAt);
    const cut = windowRows(tallies, cutAt + 2 * WINDOW_MS, healAt);
    const rejoining = windowRows(tallies, healAt - WINDOW_MS, healAt + 3 * WINDOW_MS);
    const back = windowRows(tallies, healAt + 2 * WINDOW_MS, ended);
    const bound = overAdmissionBound({ limit: LIMIT, regions: serving.length });
    console.log(
      `fallback ${fallback} (eu share before the cut ${JSON.stringify(during)})\nlinked\n${showRows(linked)}\ncut\n${showRows(cut)}\nrejoining\n${showRows(rejoining)}\nback\n${showRows(back)}\n` +
        eu.parts.notices.lines.filter((l) => l.includes('GLOBAL')).join('\n'),
    );

    // Said once per episode, to the log and to the observer; the other regions saw nothing.
    expect(eu.parts.notices.count('SLUICE_GLOBAL_UNREACHABLE')).toBe(1);
    expect(eu.parts.notices.count('SLUICE_GLOBAL_REJOINED')).toBe(1);
    expect(eu.tally.count('unreachable')).toBe(1);
    expect(eu.tally.count('rejoined')).toBe(1);
    for (const other of [serving[0]!, serving[2]!]) {
      expect(other.tally.count('unreachable')).toBe(0);
      expect(other.parts.notices.count('SLUICE_GLOBAL_UNREACHABLE')).toBe(0);
    }
    // While cut off: decided on its fallback share (limit x recent share x 1.1), every admission marked.
    expect(during.partitioned).toBe(true);
    expect(fallback).toBeGreaterThan(0);
    expect(fallback).toBeLessThan(LIMIT / 2);
    expect(cut.length).toBeGreaterThanOrEqual(5);
    for (const row of cut) {
      const [, euAdmitted, ,] = row.admitted;
      expect(euAdmitted, showRows(cut)).toBeLessThanOrEqual(fallback);
      // Its demand (doubled) is above the share: it follows the share, not the demand.
      expect(euAdmitted, showRows(cut)).toBeGreaterThanOrEqual(Math.floor(0.8 * fallback));
      expect(row.unreachable[1], showRows(cut)).toBe(euAdmitted);
      expect(row.total, showRows(cut)).toBeLessThanOrEqual(LIMIT + fallback + bound);
    }
    expect(eu.tally.reasons.get('global_unreachable')).toBeGreaterThan(0);
    for (const other of [serving[0]!, serving[2]!])
      expect(other.tally.reasons.get('global_unreachable') ?? 0).toBe(0);
    // Back: nothing marked, no window above the bound (no burst of the admissions owed to the gap).
    expect(after.partitioned).toBe(false);
    expect(back.length).toBeGreaterThanOrEqual(5);
    for (const row of back) {
      expect(row.total, showRows(back)).toBeLessThanOrEqual(LIMIT + bound);
      expect(row.unreachable[1]).toBe(0);
    }
    for (const row of linked) expect(row.total, showRows(linked)).toBeLessThanOrEqual(LIMIT + bound);
    // The windows of the cut and of the rejoin: at most the partition's cost (eu's share over its grant).
    const all = windowRows(tallies, began + WARM_MS, ended);
    for (const row of all) expect(row.total, showRows(all)).toBeLessThanOrEqual(LIMIT + fallback + bound);
    // No request waited on the dead link (a wait would last the global store's time limit, 1 s): eu's
    // requests sent while cut off answered as fast as the linked region's.
    const cutP50 = quantile(surged.latencies, 0.5);
    expect(cutP50).toBeLessThan(quantile(results[0]!.latencies, 0.5) + 25);
    expect(quantile(surged.latencies, 0.99)).toBeLessThan(GLOBAL_TIMEOUT_MS);
  }, 60_000);

  it('a restart of the global store (its data lost) costs at most the bound', async () => {
    const regions = await fleet();
    const serving = await serveRegions(regions, searchRules(LIMIT));
    stops.push(async () => {
      for (const s of serving) await s.app.close();
    });
    const began = Date.now();
    const load = loadRegions(serving, TOTAL_RPS, 26_000);
    await sleep(10_000);
    const granted = await regions.admin.dbsize();
    const pid = regions.global.pid;
    const killedAt = Date.now();
    await regions.restartGlobal();
    const restartedAt = Date.now();
    await load;
    const ended = Date.now();

    const rows = windowRows(
      serving.map((s) => s.tally),
      began + WARM_MS,
      ended,
    );
    const bound = overAdmissionBound({ limit: LIMIT, regions: serving.length });
    const charged = serving.map((s) =>
      s.tally.events.reduce((sum, e) => sum + (e.kind === 'charge' ? e.units : 0), 0),
    );
    const episodes = serving.map((s) => s.tally.count('unreachable'));
    const restartWindow = Math.floor(killedAt / WINDOW_MS) * WINDOW_MS;
    console.log(
      `restart took ${restartedAt - killedAt} ms in the window of ${new Date(restartWindow).toISOString().slice(14, 19)}; ${granted} global keys lost; charged back ${charged}; partition episodes ${episodes}\n${showRows(rows)}`,
    );
    expect(granted).toBeGreaterThan(0);
    expect(regions.global.pid).not.toBe(pid);
    // Charges (what the regions had been granted, written back) are logged, not asserted: a restart that falls
    // between two sync rounds of a window's end leaves nothing to charge (seen in CI: 29 ms, charged 0). The
    // bound below is what a restart must hold.
    expect(rows.some((row) => row.start === restartWindow)).toBe(true);
    // The guide's bound: one slice per region in the restart's window (at most two windows: the restart
    // may straddle a boundary), the linked bound in every other window. Measured: see the log.
    const restarted = [restartWindow, Math.floor(restartedAt / WINDOW_MS) * WINDOW_MS];
    const slices = restartBound({ limit: LIMIT, regions: serving.length });
    for (const row of rows)
      expect(row.total, showRows(rows)).toBeLessThanOrEqual(
        LIMIT + (restarted.includes(row.start) ? slices : bound),
      );
  }, 60_000);
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The global budget the region's limiter decides /search on now, as explain shows it. */
function globalBudget(region: ServingRegion) {
  const rule = region.app.limiter.explain({ route: '/search' }).rules.find((r) => r.rule === GLOBAL_RULE);
  if (rule?.budget === undefined) throw new Error('the global rule shows no budget');
  return rule.budget;
}
