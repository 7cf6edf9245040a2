/**
 * Envoy's rate limit service in each region (issue 44): `sluice rls --redis <region's> --region <name>
 * --global-redis <shared>` per region, answering ShouldRateLimit over real gRPC (checkMany: one call, one
 * store call). Under 80/15/5 calls above the global limit, every window's OK answers across the three
 * services stay within the limit plus the bound; a service cut off from the global store keeps answering at
 * once, on its share, and says so on stderr.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { serveRls } from '../../packages/cli/src/commands/rls.js';
import type { Io } from '../../packages/cli/src/io.js';
import { d, rlsClient } from '../../packages/envoy/src/testing/client.js';
import { searchRules, showRows, WINDOW_MS, type WindowRow } from './apps.js';
import { overAdmissionBound } from './bound.js';
import { Fleet } from './fleet.js';
import { pace, quantile } from './load.js';

const LIMIT = 100;
const TOTAL_RPS = 150;
const RUN_MS = 12_000;
const WARM_MS = 2000;

const closing: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

/** One region's `sluice rls`, started in process; resolves once it listens. */
async function startRls(fleet: Fleet, region: string, rules: string) {
  const parts = fleet.region(region);
  const out: string[] = [];
  const err: string[] = [];
  const io: Io = { out: (line) => out.push(line), err: (line) => err.push(line) };
  let stop = () => {};
  const stopped = new Promise<void>((resolve) => {
    stop = resolve;
  });
  const args = ['--rules', rules, '--port', '0', '--redis', `redis://127.0.0.1:${parts.server.port}`];
  args.push('--region', region, '--global-redis', `redis://127.0.0.1:${parts.proxy.port}`);
  const running = serveRls(args, io, stopped);
  const deadline = Date.now() + 15_000;
  while (out[0] === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const port = Number(/^listening (\d+)/.exec(out[0] ?? '')?.[1]);
  if (!(port > 0)) throw new Error(`rls did not start: ${[...out, ...err].join('\n')}`);
  const client = rlsClient(port);
  closing.push(async () => {
    client.close();
    stop();
    await running;
  });
  return { region, parts, client, out, err };
}

/** Counts of OK answers per window (its start), from each answer's time and duration_until_reset. */
class Answers {
  readonly windows = new Map<number, number>();
  overLimit = 0;
  readonly latencies: number[] = [];

  note(code: string, resetSeconds: string | undefined, resetNanos: number | undefined, ms: number): void {
    this.latencies.push(ms);
    if (code !== 'OK') {
      this.overLimit++;
      return;
    }
    const resetMs = Number(resetSeconds ?? 0) * 1000 + (resetNanos ?? 0) / 1e6;
    const end = Math.round((Date.now() + resetMs) / WINDOW_MS) * WINDOW_MS;
    this.windows.set(end - WINDOW_MS, (this.windows.get(end - WINDOW_MS) ?? 0) + 1);
  }
}

describe('sluice rls in three regions', () => {
  it('answers over gRPC within the global bound, and keeps answering when cut off', async () => {
    const fleet = await Fleet.start();
    closing.push(() => fleet.stop());
    const dir = mkdtempSync(join(tmpdir(), 'sluice-rls-regions-'));
    closing.push(() => rmSync(dir, { recursive: true, force: true }));
    const rules = join(dir, 'rules.yaml');
    // JSON is YAML: the same rules every region serves.
    writeFileSync(rules, JSON.stringify(searchRules(LIMIT)));
    const services = await Promise.all(fleet.regions.map((r) => startRls(fleet, r.plan.name, rules)));
    for (const s of services)
      expect(s.out[0]).toMatch(new RegExp(`region ${s.region}, global redis://127\\.0\\.0\\.1:`));

    const answers = services.map(() => new Answers());
    const call = (i: number, n: number) => {
      const started = performance.now();
      const key = `${services[i]!.region}-${n % 10}`;
      return services[i]!.client.shouldRateLimit({
        domain: 'regions',
        descriptors: [d(['route', '/search'], ['api_key', key])],
      }).then((response) => {
        const status = response.statuses[0];
        const reset = status?.duration_until_reset;
        answers[i]!.note(response.overall_code, reset?.seconds, reset?.nanos, performance.now() - started);
      });
    };
    const began = Date.now();
    await pace(
      services.map((s) => TOTAL_RPS * s.parts.plan.share),
      RUN_MS,
      call,
    );
    const rows: WindowRow[] = [...new Set(answers.flatMap((a) => [...a.windows.keys()]))]
      .filter((start) => start >= began + WARM_MS && start + WINDOW_MS <= Date.now())
      .sort((a, b) => a - b)
      .map((start) => {
        const admitted = answers.map((a) => a.windows.get(start) ?? 0);
        return { start, admitted, total: admitted.reduce((x, y) => x + y, 0), unreachable: [] };
      });
    const bound = overAdmissionBound({ limit: LIMIT, regions: services.length });
    console.log(`limit ${LIMIT}, bound ${bound}\n${showRows(rows)}`);
    expect(rows.length).toBeGreaterThanOrEqual(Math.floor((RUN_MS - WARM_MS) / WINDOW_MS) - 2);
    for (const row of rows) expect(row.total, showRows(rows)).toBeLessThanOrEqual(LIMIT + bound);
    const mean = rows.reduce((sum, row) => sum + row.total, 0) / rows.length;
    expect(mean).toBeGreaterThanOrEqual(0.6 * LIMIT);
    expect(answers[0]!.overLimit).toBeGreaterThan(0);
    for (const s of services) expect(s.err.join('\n')).not.toContain('SLUICE_GLOBAL_UNREACHABLE');

    // eu's link to the global store goes dark: its service answers every call at once, on its share.
    const eu = services[1]!;
    eu.parts.proxy.blackhole(true);
    const cut = new Answers();
    await pace([20], 3000, (_, n) => {
      const started = performance.now();
      return eu.client
        .shouldRateLimit({
          domain: 'regions',
          descriptors: [d(['route', '/search'], ['api_key', `cut-${n}`])],
        })
        .then((response) =>
          cut.note(response.overall_code, undefined, undefined, performance.now() - started),
        );
    });
    expect(cut.latencies.length).toBeGreaterThanOrEqual(50);
    expect(quantile(cut.latencies, 0.99)).toBeLessThan(500);
    expect(eu.err.filter((line) => line.includes('SLUICE_GLOBAL_UNREACHABLE'))).toHaveLength(1);
    eu.parts.proxy.resetAll();
    eu.parts.proxy.blackhole(false);
  }, 90_000);

  it('takes --region and --global-redis together, and checks the region’s name', async () => {
    const io: Io = { out: () => {}, err: () => {} };
    const never = new Promise<void>(() => {});
    const dir = mkdtempSync(join(tmpdir(), 'sluice-rls-regions-'));
    closing.push(() => rmSync(dir, { recursive: true, force: true }));
    const rules = join(dir, 'rules.yaml');
    writeFileSync(rules, JSON.stringify(searchRules(LIMIT)));
    const args = ['--rules', rules, '--port', '0'];
    const global = ['--global-redis', 'redis://127.0.0.1:1'];
    await expect(serveRls([...args, '--region', 'eu'], io, never)).rejects.toThrow(
      '--region and --global-redis go together',
    );
    await expect(serveRls([...args, ...global], io, never)).rejects.toThrow(
      '--region and --global-redis go together',
    );
    await expect(serveRls([...args, ...global, '--region', 'EU West'], io, never)).rejects.toThrow(
      /regions\.region must be a region name/,
    );
  });
});
