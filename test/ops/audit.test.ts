/**
 * The audit trail end to end, on real servers: rules pushed with `sluice push --by`, a gateway (limiter, RedisStore,
 * redisRules, the auditTrail observer) reloading them with a mode and a rollout change, a ban its traffic starts,
 * `sluice unban --by` lifting it; then `sluice audit` lists all of them and its filters narrow the list. The same on
 * PostgreSQL with a gateway watching its rules file and `sluice audit --postgres`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import {
  type AuditRecord,
  auditTrail,
  createLimiter,
  type Limiter,
  MemoryStore,
  tagFor,
  watchRules,
} from '@sluice/core';
import { PostgresStore } from '@sluice/postgres';
import { RedisStore, redisRules } from '@sluice/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { postgresSuite, randomTablePrefix } from '../support/postgres.js';
import { randomPrefix, redisSuite, waitFor } from '../support/redis.js';
import { runSluice, sluiceProcess } from './fixtures/sluice.js';

const IP = '198.51.100.7';

/** A rules file: `login` (banning) in `mode`, `search` at `rollout`. */
function rulesText(mode: 'shadow' | 'enforce', rollout: number): string {
  return `domain: shop
rules:
  - name: login
    match: {route: /login}
    key: [ip]
    limit: {requests: 2, per: 1m}
    ban: {after: 2, within: 1m, for: 10m}
    mode: ${mode}
    owner: team-identity
  - name: search
    match: {route: /search}
    key: [ip]
    limit: {requests: 100, per: 1s}
    rollout: ${rollout}
    owner: team-search
`;
}

let tmp: string;
let v1: string;
let v2: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'sluice-audit-'));
  v1 = join(tmp, 'v1.yaml');
  v2 = join(tmp, 'v2.yaml');
  writeFileSync(v1, rulesText('shadow', 10));
  writeFileSync(v2, rulesText('enforce', 50));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Login attempts from IP until the gateway bans it (the 2nd denial starts the ban), and one while banned. */
async function banIp(limiter: Limiter): Promise<void> {
  const outcomes: string[] = [];
  for (let i = 0; i < 5; i++) {
    const decision = await limiter.check({ route: '/login', ip: IP });
    outcomes.push(decision.allowed ? 'allowed' : decision.reason);
  }
  expect(outcomes).toEqual(['allowed', 'allowed', 'limit', 'ban', 'ban']);
}

/** `sluice audit` lines, parsed from --json. */
async function auditJson(...args: string[]): Promise<AuditRecord[]> {
  const run = await runSluice('audit', ...args, '--json');
  expect(run.code, run.err).toBe(0);
  return run.out === '' ? [] : run.out.split('\n').map((line) => JSON.parse(line) as AuditRecord);
}

const summary = (records: readonly AuditRecord[]) =>
  records.map((r) => `${r.kind} ${r.rule ?? '-'} ${r.actor}`);

describe('on Redis', () => {
  const redis = redisSuite();

  test('a push, a reload with a mode and a rollout change, a ban and an unban, listed and filtered', async () => {
    const prefix = randomPrefix('audit');
    const url = `redis://${redis.server.host}:${redis.server.port}`;
    const at = (p: string) => ['--redis', url, '--prefix', p];
    const start = Date.now();
    const pushed1 = await runSluice('push', v1, ...at(prefix), '--by', 'alice');
    expect(pushed1.code, pushed1.err).toBe(0);

    const client = new Redis({ host: redis.server.host, port: redis.server.port });
    const store = new RedisStore({ client, prefix });
    const logged: Record<string, unknown>[] = [];
    const logger = { info: (line: object) => logged.push(line as never), warn: () => {} };
    const trail = auditTrail({ store, actor: 'gw-1', logger });
    const source = await redisRules(client, { domain: 'shop', prefix });
    const limiter = createLimiter({ rules: source, store, observer: trail, logger: { warn: () => {} } });
    try {
      const pushed2 = await runSluice('push', v2, ...at(prefix), '--by', 'bob');
      expect(pushed2.code, pushed2.err).toBe(0);
      await waitFor(
        'the reload',
        async () => limiter.explain({ route: '/login', ip: IP }).rules[0]?.mode === 'enforce',
      );
      await banIp(limiter);
      await trail.flush();
      const unbanned = await runSluice(
        'unban',
        v2,
        '--rule',
        'login',
        '--key',
        `ip=${IP}`,
        ...at(prefix),
        '--by',
        'carol',
      );
      expect(unbanned.code, unbanned.err).toBe(0);
      expect(unbanned.out).toContain('lifted the ban of rule login');

      const all = await auditJson(...at(prefix));
      expect(summary(all)).toEqual([
        'push - alice',
        'reload - gw-1',
        'push - bob',
        'reload - gw-1',
        'mode login gw-1',
        'rollout search gw-1',
        'ban login gw-1',
        'unban login carol',
      ]);
      const [push1, load, push2, reload, mode, rollout, ban, unban] = all as [AuditRecord, ...AuditRecord[]];
      const compiled = limiter.explain({}).version;
      expect(push2!.details).toMatchObject({ version: compiled, serial: 2, source: v2 });
      expect(push1.details.hash).toMatch(/^[0-9a-f]{12}$/);
      expect(push1.details.hash).not.toBe(push2!.details.hash);
      expect(load!.details).toEqual({ from: null, to: push1.details.version, rules: 2 });
      expect(reload!.details).toEqual({
        from: push1.details.version,
        to: compiled,
        rules: 2,
        added: [],
        removed: [],
        changed: ['login', 'search'],
      });
      expect(mode!.details).toMatchObject({ was: 'shadow', now: 'enforce' });
      expect(rollout!.details).toMatchObject({ was: 10, now: 50 });
      // The ban names the rule and the tag sluice unban and explain show; the address is nowhere.
      const tag = tagFor({ name: 'login', key: ['ip'], global: false }, { ip: IP });
      expect(ban!.details).toMatchObject({ tag, version: compiled });
      expect(Date.parse(ban!.details.until as string)).toBeGreaterThan(start + 9 * 60_000);
      expect(unban!.details).toEqual({ tag, lifted: true });
      expect(unban!.domain).toBe('shop');
      expect(JSON.stringify(all)).not.toContain(IP);
      // The gateway's decision log got its own entries too.
      expect(logged.filter((l) => l.event === 'sluice.audit').map((l) => l.kind)).toEqual([
        'reload',
        'reload',
        'mode',
        'rollout',
        'ban',
      ]);

      // Filters: kinds, rule, time, count; the text listing, run as a user runs it.
      expect(summary(await auditJson(...at(prefix), '--kind', 'push,ban'))).toEqual([
        'push - alice',
        'push - bob',
        'ban login gw-1',
      ]);
      expect(summary(await auditJson(...at(prefix), '--kind', 'mode', '--kind', 'rollout'))).toHaveLength(2);
      expect(summary(await auditJson(...at(prefix), '--rule', 'login'))).toEqual([
        'mode login gw-1',
        'ban login gw-1',
        'unban login carol',
      ]);
      expect(await auditJson(...at(prefix), '--since', new Date(Date.now() + 60_000).toISOString())).toEqual(
        [],
      );
      expect(await auditJson(...at(prefix), '--since', '1h')).toHaveLength(8);
      expect(summary(await auditJson(...at(prefix), '--limit', '2'))).toEqual([
        'ban login gw-1',
        'unban login carol',
      ]);
      expect(await auditJson(...at(prefix), '--domain', 'other')).toEqual([]);
      const listed = await sluiceProcess('audit', ...at(prefix), '--kind', 'unban');
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout).toMatch(
        new RegExp(
          `^\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z  unban    carol  shop  login  tag=${tag}  lifted=true\\n$`,
        ),
      );
    } finally {
      await limiter.close();
      await source.close?.();
      await store.close();
      client.disconnect();
    }
  }, 120_000);

  test('push without --by records the OS user; usage errors get a did-you-mean', async () => {
    const prefix = randomPrefix('audit');
    const url = `redis://${redis.server.host}:${redis.server.port}`;
    const pushed = await sluiceProcess('push', v1, '--redis', url, '--prefix', prefix);
    expect(pushed.code, pushed.stderr).toBe(0);
    const [entry] = await auditJson('--redis', url, '--prefix', prefix);
    expect(entry).toMatchObject({ kind: 'push', actor: userInfo().username, domain: 'shop' });

    const typo = await runSluice('audit', '--redis', url, '--rul', 'login');
    expect(typo).toMatchObject({ code: 2 });
    expect(typo.err.split('\n')[0]).toBe('sluice audit: unknown option "--rul" (did you mean "--rule"?)');
    const pushTypo = await runSluice('push', v1, '--redis', url, '--bye', 'x');
    expect(pushTypo.err.split('\n')[0]).toBe('sluice push: unknown option "--bye" (did you mean "--by"?)');
    expect((await runSluice('audit', '--redis', url, '--kind', 'bans')).err).toContain(
      '--kind: no kind "bans" (kinds: push, reload, mode, rollout, ban, unban)',
    );
    expect((await runSluice('audit', '--redis', url, '--since', '1y')).err).toContain(
      '--since: "1y" is not a duration',
    );
    expect((await runSluice('audit')).err).toContain('audit needs one of --redis <url> or --postgres <url>');
    expect((await runSluice('push', v1, '--redis', url, '--by', ' ')).err).toContain('--by needs a name');
  }, 60_000);

  test('a store that cannot be reached: exit 1, said on stderr', async () => {
    const run = await runSluice('audit', '--redis', 'redis://127.0.0.1:1');
    expect(run.code).toBe(1);
    expect(run.err).toMatch(/^audit in redis:\/\/127\.0\.0\.1:1 failed: /);
  });
});

describe('on PostgreSQL', () => {
  const postgres = postgresSuite();

  test('a gateway watching its file: the reload, mode change, ban and unban, listed by sluice audit --postgres', async () => {
    const tablePrefix = randomTablePrefix('audit');
    const file = join(tmp, 'pg-rules.yaml');
    writeFileSync(file, rulesText('shadow', 10));
    const store = new PostgresStore({
      connectionString: postgres.server.url,
      tablePrefix,
      createTable: true,
    });
    const trail = auditTrail({ store, actor: 'gw-pg' });
    const source = watchRules(file, { debounceMs: 20 });
    const limiter = createLimiter({ rules: source, store, observer: trail, logger: { warn: () => {} } });
    try {
      writeFileSync(file, rulesText('enforce', 50));
      await source.reload();
      await banIp(limiter);
      expect(await limiter.unban('login', { ip: IP })).toBe(true);
      await trail.flush();
      const at = ['--postgres', postgres.server.url, '--table-prefix', tablePrefix];
      expect(summary(await auditJson(...at))).toEqual([
        'reload - gw-pg',
        'reload - gw-pg',
        'mode login gw-pg',
        'rollout search gw-pg',
        'ban login gw-pg',
        'unban login gw-pg',
      ]);
      expect(summary(await auditJson(...at, '--kind', 'ban,unban', '--rule', 'login'))).toEqual([
        'ban login gw-pg',
        'unban login gw-pg',
      ]);
      const text = await runSluice('audit', ...at, '--kind', 'mode');
      expect(text.out).toMatch(
        / {2}mode {5}gw-pg {2}shop {2}login {2}was=shadow {2}now=enforce {2}from=\w{12} {2}to=\w{12}$/,
      );
    } finally {
      await limiter.close();
      await source.close();
      await store.close();
    }
  }, 120_000);
});

describe('in one process', () => {
  test("MemoryStore keeps the trail in process: the limiter's own store reads it back", async () => {
    const store = new MemoryStore();
    const trail = auditTrail({ store, actor: 'app' });
    const limiter = createLimiter({ rules: watchRules(v2), store, observer: trail });
    await banIp(limiter);
    await trail.flush();
    expect(summary(await store.audit.read())).toEqual(['reload - app', 'ban login app']);
    await limiter.close();
  });
});
