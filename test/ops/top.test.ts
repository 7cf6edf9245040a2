/**
 * Issue 45: heavy hitters across gateways. Two Fastify gateways (child processes) share a real redis-server and
 * publish their boards; a seeded Zipf load over real HTTP. The merged heavy hitters match the exact count of
 * each key within the stated bound (each gateway's floor, summed: at most N/k), every key above the bound is
 * found, and `sluice top --once` shows them, with the names an app's reveal hook gives. A third gateway on
 * another rules version is flagged.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '@sluice/cli';
import { type MergedSketch, mergeBoards } from '@sluice/core';
import { RedisStore } from '@sluice/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomPrefix, redisSuite } from '../support/redis.js';
import {
  boardsHolding,
  type GatewayChild,
  LIMIT,
  sendLoad,
  startGateway,
  type Tally,
  TOP_KEYS,
  tagOf,
  zipfKeys,
} from './top-load.js';

const redis = redisSuite();
const prefix = randomPrefix('top');
const UNIVERSE = 300;
const SENT = 3_000;
const gateways: GatewayChild[] = [];
let dir: string;
let tally: Tally;
/** Tag -> API key, for every key the load may send. */
const accounts = new Map(Array.from({ length: UNIVERSE }, (_, i) => [tagOf(`acct-${i}`), `acct-${i}`]));

async function sluice(...args: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (line) => out.push(line), err: (line) => err.push(line) });
  return { code, out, err };
}

/** Each listed key against the exact tally: within the bound both ways, bracketed by [low, high]. */
function expectWithinBound(sketch: MergedSketch, exact: ReadonlyMap<string, number>, n: number): void {
  expect(sketch.total).toBe(n);
  expect(sketch.bound).toBeLessThanOrEqual(n / TOP_KEYS);
  for (const key of sketch.keys) {
    const account = accounts.get(key.tag);
    expect(account, `tag ${key.tag} is no key the load sent`).toBeDefined();
    const truth = exact.get(account!) ?? 0;
    expect(Math.abs(key.count - truth), `${account}: ${key.count} vs ${truth}`).toBeLessThanOrEqual(
      sketch.bound,
    );
    expect(key.low).toBeLessThanOrEqual(truth);
    expect(key.high).toBeGreaterThanOrEqual(truth);
  }
  const listed = new Set(sketch.keys.map((key) => accounts.get(key.tag)));
  for (const [account, truth] of exact) if (truth > sketch.bound) expect(listed, account).toContain(account);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sluice-top-'));
  const node = [{ host: redis.server.host, port: redis.server.port }];
  gateways.push(
    ...(await Promise.all([startGateway('gw-a', prefix, node), startGateway('gw-b', prefix, node)])),
  );
  tally = await sendLoad(
    gateways.map((g) => g.url),
    zipfKeys(SENT, UNIVERSE, 1.2, 0x2545f491),
  );
}, 120_000);

afterAll(async () => {
  await Promise.all(gateways.map((g) => g.stop()));
  rmSync(dir, { recursive: true, force: true });
});

describe('heavy hitters of two gateways sharing Redis', () => {
  it('match the exact count of each key within the stated bound, enforced and denied', async () => {
    const store = new RedisStore({ client: redis.client, prefix });
    const boards = await boardsHolding(store, 2, SENT);
    await store.close();
    const merged = mergeBoards(boards, { keys: 1_000 });
    expect(merged.gateways.map((g) => g.gateway)).toEqual(['gw-a', 'gw-b']);
    expect(merged.mixed).toBe(false);
    const rule = merged.rules.find((r) => r.rule === 'per_key')!;
    const denied = [...tally.denied.values()].reduce((a, b) => a + b, 0);
    expect(rule.requests).toBe(SENT);
    expect(rule.denied).toBe(denied);
    // More keys than counters: keys were turned out, and the bound is not trivially 0.
    expect(tally.requests.size).toBeGreaterThan(TOP_KEYS);
    expect(rule.keys.bound).toBeGreaterThan(0);
    expectWithinBound(rule.keys, tally.requests, SENT);
    expectWithinBound(rule.denials, tally.denied, denied);
    // The hottest key sent more than its limit: it is the first listed, and denied the rest.
    expect(accounts.get(rule.keys.keys[0]!.tag)).toBe('acct-0');
    expect(tally.denied.get('acct-0')).toBe(tally.requests.get('acct-0')! - LIMIT);
    const shadow = merged.rules.find((r) => r.rule === 'per_key_shadow')!;
    expect(shadow).toMatchObject({ requests: SENT, denied: 0, mode: 'shadow' });
    expect(shadow.shadowDenied).toBeGreaterThan(0);
    expect(rule.routes.map(([route]) => route).sort()).toEqual(['/export', '/search']);
  }, 60_000);

  it('sluice top --once shows them: rates, versions, store health, and the names reveal gives', async () => {
    const reveal = join(dir, 'reveal.mjs');
    const names = Object.fromEntries([...accounts].map(([tag, account]) => [tag, account.toUpperCase()]));
    writeFileSync(
      reveal,
      `const names = ${JSON.stringify(names)};\nexport function reveal(tag) { return names[tag]; }\n`,
    );
    const url = `redis://${redis.server.host}:${redis.server.port}`;
    const json = await sluice('top', '--redis', url, '--prefix', prefix, '--once', '--json', '--keys', '5');
    expect(json.code, json.err.join('\n')).toBe(0);
    const view = JSON.parse(json.out.join('\n'));
    const rule = view.board.rules.find((r: { rule: string }) => r.rule === 'per_key');
    expect(rule.requests).toBe(SENT);
    expect(rule.keys.keys).toHaveLength(5);

    const text = await sluice(
      'top',
      '--redis',
      url,
      '--prefix',
      prefix,
      '--once',
      '--keys',
      '5',
      '--reveal',
      reveal,
    );
    expect(text.code, text.err.join('\n')).toBe(0);
    const frame = text.out.join('\n');
    expect(frame).toContain('2 gateway(s)');
    expect(frame).toMatch(/^rules {2}watching: [\w-]+ on gw-a, gw-b$/m);
    expect(frame).toMatch(/^store {2}gw-a +connected, [\d.]+ ms mean/m);
    expect(frame).toContain(`per_key (enforce, version ${rule.versions[0].version}, watching)`);
    expect(frame).toContain(`${SENT.toLocaleString('en-US')} requests`);
    // The hottest keys, by tag, with their counts and the app's names for them.
    for (const key of rule.keys.keys) {
      const line = frame.split('\n').find((l) => l.includes(key.tag));
      expect(line, key.tag).toBeDefined();
      expect(line).toContain(names[key.tag]);
      expect(line).toContain(key.count.toLocaleString('en-US'));
    }
    expect(frame).not.toMatch(/acct-\d/);
  }, 60_000);

  it('flags a gateway on another rules version', async () => {
    const node = [{ host: redis.server.host, port: redis.server.port }];
    gateways.push(await startGateway('gw-c', prefix, node, false, LIMIT + 1));
    const url = `redis://${redis.server.host}:${redis.server.port}`;
    let frame = '';
    for (let i = 0; i < 100 && !frame.includes('gw-c'); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      frame = (await sluice('top', '--redis', url, '--prefix', prefix, '--once')).out.join('\n');
    }
    expect(frame).toMatch(/^MIXED {2}watching: [\w-]+ on gw-a, gw-b; [\w-]+ on gw-c$/m);
    expect(frame).toMatch(/^per_key \(enforce, version [\w-]+ \/ [\w-]+, watching\) {2}MIXED VERSIONS/m);
  }, 60_000);
});
