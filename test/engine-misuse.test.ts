import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError, compileRules, createLimiter, type LimiterNotice, MemoryStore } from '@sluice/core';
import type { CompiledRules } from '@sluice/core/store';
import { afterEach, describe, expect, it } from 'vitest';
import { PER_REQUEST_THRESHOLD } from '../packages/core/src/observe/misuse.js';

/** Rules of their own per test: the per-request smell is judged by rule version. */
function rulesOf(domain: string, name = 'per_ip'): CompiledRules {
  return compileRules({ domain, rules: [{ name, key: ['ip'], limit: { requests: 5, per: '1m' } }] });
}

function recorder() {
  const lines: string[] = [];
  return { lines, logger: { warn: (message: string) => void lines.push(message) } };
}

const codesOf = (lines: readonly string[]) => lines.map((line) => /\[(SLUICE_[A-Z_]+)\]$/.exec(line)?.[1]);

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A real HTTP server whose handler asks `limiterFor()` for a limiter and answers 429 when it denies. */
async function serve(limiterFor: () => ReturnType<typeof createLimiter>): Promise<string> {
  server = createServer((req, res) => {
    void limiterFor()
      .check({ ip: req.socket.remoteAddress })
      .then((decision) => res.writeHead(decision.allowed ? 200 : 429).end());
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

async function statuses(url: string, count: number): Promise<number[]> {
  const seen: number[] = [];
  for (let i = 0; i < count; i++) seen.push((await fetch(url)).status);
  return seen;
}

describe('a limiter built per request', () => {
  it('never limits, and is named once with SLUICE_LIMITER_PER_REQUEST', async () => {
    const rules = rulesOf('per_request');
    const { lines, logger } = recorder();
    const url = await serve(() => createLimiter({ rules, logger }));
    const seen = await statuses(url, PER_REQUEST_THRESHOLD + 10);
    expect(seen.every((status) => status === 200)).toBe(true);
    expect(codesOf(lines)).toEqual(['SLUICE_LIMITER_PER_REQUEST']);
    expect(lines[0]).toContain('domain "per_request"');
  });

  it('is not suspected of limiters that are closed after use (a tool running one per test case)', async () => {
    const { lines, logger } = recorder();
    const rules = rulesOf('closed_each');
    for (let i = 0; i < PER_REQUEST_THRESHOLD * 2; i++) {
      const limiter = createLimiter({ rules, logger });
      await limiter.check({ ip: '192.0.2.1' });
      await limiter.close();
    }
    expect(lines).toEqual([]);
  });

  it('is not suspected of a limiter built once', async () => {
    const { lines, logger } = recorder();
    const limiter = createLimiter({ rules: rulesOf('built_once'), logger });
    const url = await serve(() => limiter);
    const seen = await statuses(url, PER_REQUEST_THRESHOLD + 10);
    expect(seen.filter((status) => status === 429)).toHaveLength(PER_REQUEST_THRESHOLD + 5);
    expect(lines).toEqual([]);
  });
});

describe('two limiters on one store', () => {
  it('warn once, naming the rule, that a request through both is counted twice', async () => {
    const store = new MemoryStore();
    const rules = rulesOf('shared');
    const { lines, logger } = recorder();
    const first = createLimiter({ rules, store, logger });
    const second = createLimiter({ rules, store, logger });
    createLimiter({ rules, store, logger });
    expect(codesOf(lines)).toEqual(['SLUICE_STORE_SHARED']);
    expect(lines[0]).toContain('rule "per_ip" of domain "shared"');
    // What the notice is about: one request through both limiters uses two units of a limit of 5.
    await first.check({ ip: '192.0.2.1' });
    await second.check({ ip: '192.0.2.1' });
    expect((await first.check({ ip: '192.0.2.1' })).remaining).toBe(2);
  });

  it('stay quiet with their own stores, other rule names, a closed predecessor, or the code silenced', async () => {
    const { lines, logger } = recorder();
    const rules = rulesOf('quiet');
    createLimiter({ rules, logger });
    createLimiter({ rules, logger });
    const store = new MemoryStore();
    createLimiter({ rules, store, logger });
    createLimiter({ rules: rulesOf('quiet', 'other_rule'), store, logger });
    const replaced = new MemoryStore();
    await createLimiter({ rules, store: replaced, logger }).close();
    createLimiter({ rules, store: replaced, logger });
    const silenced = new MemoryStore();
    createLimiter({ rules, store: silenced, logger });
    createLimiter({ rules, store: silenced, logger, silence: ['SLUICE_STORE_SHARED'] });
    expect(lines).toEqual([]);
  });

  it('warn when new rules (a reload) make a limiter count what another already counts', () => {
    const { lines, logger } = recorder();
    const store = new MemoryStore();
    createLimiter({ rules: rulesOf('reload', 'a'), store, logger });
    const other = createLimiter({ rules: rulesOf('reload', 'b'), store, logger });
    expect(lines).toEqual([]);
    other.setRules(rulesOf('reload', 'a'));
    expect(codesOf(lines)).toEqual(['SLUICE_STORE_SHARED']);
  });

  it('refuses an unknown notice code in silence', () => {
    expect(() =>
      createLimiter({ rules: rulesOf('codes'), silence: ['SLUICE_STORE_SHARD' as LimiterNotice] }),
    ).toThrow(ConfigError);
  });
});
