import { describe, expect, it } from 'vitest';
import { createLimiter } from '../engine/engine.js';
import { compileRules } from '../rules/compile.js';
import { type AuditEntry, MemoryAuditLog } from '../store/audit.js';
import { MemoryStore } from '../store/memory.js';
import { tagFor } from '../store/tags.js';
import { auditTrail } from './audit.js';

const rules = (mode: 'enforce' | 'shadow', rollout = 100) =>
  compileRules({
    domain: 'api',
    rules: [
      {
        name: 'login',
        key: ['ip'],
        limit: { requests: 1, per: '1m' },
        ban: { after: 2, within: '1m', for: '10m' },
        mode,
        rollout,
      },
      { name: 'search', key: ['ip'], limit: { requests: 100, per: '1s' }, rollout },
    ],
  });

const entry = (kind: AuditEntry['kind'], at: number, rule: string | null = null): AuditEntry => ({
  at,
  kind,
  actor: 'ops',
  domain: 'api',
  rule,
  details: {},
});

describe('MemoryAuditLog', () => {
  it('keeps the newest entries in order past its bound, and filters by time, kind, rule and count', async () => {
    const log = new MemoryAuditLog(3);
    for (let i = 1; i <= 5; i++) await log.append(entry(i % 2 === 0 ? 'ban' : 'push', i, `r${i}`));
    expect((await log.read()).map((e) => e.at)).toEqual([3, 4, 5]);
    expect((await log.read({ kinds: ['push'] })).map((e) => e.at)).toEqual([3, 5]);
    expect((await log.read({ since: 4 })).map((e) => e.at)).toEqual([4, 5]);
    expect((await log.read({ rule: 'r4' })).map((e) => e.kind)).toEqual(['ban']);
    expect((await log.read({ limit: 1 })).map((e) => e.id)).toEqual(['5']);
    await expect(log.read({ kinds: ['bam' as 'ban'] })).rejects.toThrow('no kind "bam"');
  });
});

describe('auditTrail', () => {
  it('records the load, a reload with mode and rollout changes, a ban with its hashed tag and an unban', async () => {
    const store = new MemoryStore();
    const lines: object[] = [];
    let now = 1_000_000;
    const trail = auditTrail({
      store,
      actor: 'gw-1',
      clock: () => now,
      logger: { info: (line) => lines.push(line), warn: (line) => lines.push(line) },
    });
    let current = rules('shadow', 100);
    const subscribers: ((r: typeof current) => void)[] = [];
    const limiter = createLimiter({
      rules: {
        get current() {
          return current;
        },
        subscribe: (onRules) => {
          subscribers.push(onRules);
          return () => {};
        },
      },
      store,
      clock: () => now,
      observer: trail,
      logger: { warn: () => {} },
    });
    const first = current.version;
    current = rules('enforce', 50);
    for (const s of subscribers) s(current);
    current = rules('enforce', 100);
    for (const s of subscribers) s(current);
    // Keys inside the 50% rollout do not matter now: the rollout is back at 100.
    for (let i = 0; i < 4; i++) await limiter.check({ ip: '203.0.113.9' });
    now += 1000;
    expect(await limiter.unban('login', { ip: '203.0.113.9' })).toBe(true);
    await trail.flush();

    const read = await store.audit.read();
    const tag = tagFor(current.rules[0]!, { ip: '203.0.113.9' });
    expect(read.map((e) => [e.kind, e.rule])).toEqual([
      ['reload', null],
      ['reload', null],
      ['mode', 'login'],
      ['rollout', 'login'],
      ['rollout', 'search'],
      ['reload', null],
      ['rollout', 'login'],
      ['rollout', 'search'],
      ['ban', 'login'],
      ['unban', 'login'],
    ]);
    expect(read[0]!.details).toEqual({ from: null, to: first, rules: 2 });
    expect(read[1]!.details).toMatchObject({
      from: first,
      added: [],
      removed: [],
      changed: ['login', 'search'],
    });
    expect(read[2]!.details).toMatchObject({ was: 'shadow', now: 'enforce' });
    expect(read[3]!.details).toMatchObject({ was: 100, now: 50 });
    expect(read[8]!.details).toEqual({
      tag,
      until: new Date(1_000_000 + 600_000).toISOString(),
      version: current.version,
    });
    expect(read[9]!.details).toEqual({ tag, lifted: true });
    expect(read.every((e) => e.actor === 'gw-1' && e.domain === 'api')).toBe(true);
    // The key's value is nowhere, in the store or the log lines.
    expect(JSON.stringify([read, lines])).not.toContain('203.0.113.9');
    expect(lines.filter((l) => (l as { event: string }).event === 'sluice.audit')).toHaveLength(10);
    await limiter.close();
  });

  it('caps ban entries per minute and says how many were left out in the next one', async () => {
    const log = new MemoryAuditLog();
    let now = 0;
    const trail = auditTrail({ store: { audit: log }, clock: () => now, maxBansPerMinute: 1 });
    const table = compileRules({
      domain: 'api',
      rules: [
        {
          name: 'r',
          key: ['ip'],
          limit: { requests: 1, per: '1m' },
          ban: { after: 1, within: '1m', for: '1h' },
        },
      ],
    });
    trail.onRulesLoaded!(table);
    const banned = {
      allowed: false,
      version: table.version,
      results: [{ rule: 'r', mode: 'enforce', banStarted: true, bannedUntil: 3_600_000 }],
    } as unknown as Parameters<NonNullable<typeof trail.onDecision>>[0];
    for (const ip of ['a', 'b', 'c']) trail.onDecision!(banned, { ip });
    now = 60_000;
    trail.onDecision!(banned, { ip: 'd' });
    await trail.flush();
    const bans = await log.read({ kinds: ['ban'] });
    expect(bans.map((e) => e.details.unrecorded)).toEqual([undefined, 2]);
  });

  it('tells a failing store once per episode, and when it writes again', async () => {
    let fail = true;
    const warnings: string[] = [];
    const trail = auditTrail({
      store: {
        audit: {
          append: () => (fail ? Promise.reject(new Error('down')) : Promise.resolve()),
          read: () => Promise.resolve([]),
        },
      },
      logger: { info: () => {}, warn: (line) => warnings.push((line as { msg: string }).msg) },
    });
    const table = compileRules({ domain: 'api', rules: [] });
    trail.onUnban!('r', false, 't1');
    trail.onUnban!('r', false, 't2');
    trail.onRulesLoaded!(table);
    await trail.flush();
    fail = false;
    trail.onUnban!('r', false, 't3');
    await trail.flush();
    expect(warnings).toEqual([
      'SLUICE_AUDIT_UNWRITTEN: audit entries not written to the store: down',
      'SLUICE_AUDIT_WRITTEN: audit entries written again; 3 were not',
    ]);
  });

  it('refuses a store without an audit log, and a misspelled option', () => {
    expect(() => auditTrail({ store: {} })).toThrow('the store keeps no audit log');
    expect(() => auditTrail({})).toThrow('needs a store with an audit log, a logger, or both');
    expect(() => auditTrail({ store: new MemoryStore(), actr: 'x' } as never)).toThrow(
      'did you mean "actor"',
    );
  });
});
