/**
 * Issue 45 on Redis Cluster: two Fastify gateways (child processes) on a 3-master Cluster publish their boards
 * (two keys under one hash tag: one slot, one node); `sluice top --cluster --once` reads and merges them, the
 * counts within their bound, and shows each master's share of the script calls.
 */

import { main } from '@sluice/cli';
import { mergeBoards } from '@sluice/core';
import { RedisStore } from '@sluice/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterSuite } from '../support/cluster-suite.js';
import { randomPrefix } from '../support/redis.js';
import {
  boardsHolding,
  type GatewayChild,
  sendLoad,
  startGateway,
  type Tally,
  tagOf,
  zipfKeys,
} from './top-load.js';

const cluster = clusterSuite();
const prefix = randomPrefix('topc');
const SENT = 1_200;
const gateways: GatewayChild[] = [];
let tally: Tally;

beforeAll(async () => {
  const nodes = cluster.handle.nodes;
  gateways.push(
    ...(await Promise.all([
      startGateway('gw-a', prefix, nodes, true),
      startGateway('gw-b', prefix, nodes, true),
    ])),
  );
  tally = await sendLoad(
    gateways.map((g) => g.url),
    zipfKeys(SENT, 150, 1.1, 0x68e31da4),
  );
}, 120_000);

afterAll(async () => {
  await Promise.all(gateways.map((g) => g.stop()));
});

describe('watching a fleet on Redis Cluster', () => {
  it('publishes and reads the boards on one slot, merged within the bound', async () => {
    const store = new RedisStore({ client: cluster.client, prefix });
    const merged = mergeBoards(await boardsHolding(store, 2, SENT), { keys: 1_000 });
    await store.close();
    const rule = merged.rules.find((r) => r.rule === 'per_key')!;
    expect(rule.requests).toBe(SENT);
    expect(rule.keys.bound).toBeLessThanOrEqual(SENT / 16);
    const accounts = new Map([...tally.requests.keys()].map((account) => [tagOf(account), account]));
    for (const key of rule.keys.keys) {
      const truth = tally.requests.get(accounts.get(key.tag)!) ?? 0;
      expect(Math.abs(key.count - truth)).toBeLessThanOrEqual(rule.keys.bound);
    }
  }, 60_000);

  it('sluice top --cluster shows each master’s share of the calls', async () => {
    const [first] = cluster.handle.nodes;
    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (line: string) => out.push(line), err: (line: string) => err.push(line) };
    const url = `redis://${first!.host}:${first!.port}`;
    const code = await main(['top', '--redis', url, '--cluster', '--prefix', prefix, '--once', '--json'], io);
    expect(code, err.join('\n')).toBe(0);
    const view = JSON.parse(out.join('\n'));
    expect(view.board.gateways.map((g: { gateway: string }) => g.gateway)).toEqual(['gw-a', 'gw-b']);
    expect(view.shards.over).toBe('start');
    const nodes = view.shards.nodes as { node: string; calls: number; share: number }[];
    expect(nodes.map((n) => n.node).sort()).toEqual(
      cluster.handle.nodes.map((n) => `${n.host}:${n.port}`).sort(),
    );
    // The load's keys spread over the slots: every master took script calls, and the shares add up to 1.
    for (const node of nodes) expect(node.calls).toBeGreaterThan(0);
    expect(nodes.reduce((sum, n) => sum + n.share, 0)).toBeCloseTo(1, 6);
    expect(view.shards.imbalance).toBeGreaterThanOrEqual(1);

    out.length = 0;
    expect(await main(['top', '--redis', url, '--cluster', '--prefix', prefix, '--once'], io)).toBe(0);
    const frame = out.join('\n');
    expect(frame).toContain('2 gateway(s)');
    expect(frame).toMatch(
      /^shards script calls since each node started: (127\.0\.0\.1:\d+ [\d.]+% {2}){2}127\.0\.0\.1:\d+ [\d.]+%; imbalance [\d.]+/m,
    );
  }, 60_000);
});
