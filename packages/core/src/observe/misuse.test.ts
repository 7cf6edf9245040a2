import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createLimiter } from '../engine/engine.js';
import { compileRules } from '../rules/compile.js';
import type { CompiledRules } from '../rules/contract.js';
import { SHORT_LIVED_THRESHOLD } from './misuse.js';

/** Rules of their own per test: the smell is judged by rule version. */
function rulesOf(domain: string): CompiledRules {
  return compileRules({
    domain,
    rules: [{ name: 'per_ip', key: ['ip'], limit: { requests: 2, per: '1m' } }],
  });
}

function recorder() {
  const lines: string[] = [];
  return { lines, logger: { warn: (message: string) => void lines.push(message) } };
}

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

describe('a limiter built inside a request handler', () => {
  it('is named after a handful of requests, not fifty', async () => {
    const rules = rulesOf('handler_few');
    const { lines, logger } = recorder();
    server = createServer((req, res) => {
      // The mistake: a limiter (and its MemoryStore) per request.
      void createLimiter({ rules, logger })
        .check({ ip: req.socket.remoteAddress })
        .then((decision) => res.writeHead(decision.allowed ? 200 : 429).end());
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const statuses: number[] = [];
    for (let i = 0; i <= SHORT_LIVED_THRESHOLD + 3; i++) statuses.push((await fetch(url)).status);
    expect(statuses.every((status) => status === 200)).toBe(true); // what the notice is about
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/domain "handler_few".*\[SLUICE_LIMITER_PER_REQUEST\]$/);
  });

  it('is not suspected of limiters built at start-up and then used', async () => {
    const rules = rulesOf('startup_many');
    const { lines, logger } = recorder();
    // Ten limiters with the same rules (one per route, say), all built before any request.
    const limiters = Array.from({ length: 10 }, () => createLimiter({ rules, logger }));
    for (let round = 0; round < 3; round++)
      for (const limiter of limiters) await limiter.check({ ip: '192.0.2.1' });
    expect(lines).toEqual([]);
  });

  it('is not suspected of limiters built one after another that each serve more than a request or two', async () => {
    const rules = rulesOf('lazy_routes');
    const { lines, logger } = recorder();
    for (let i = 0; i < SHORT_LIVED_THRESHOLD * 2; i++) {
      const limiter = createLimiter({ rules, logger });
      for (let j = 0; j < 3; j++) await limiter.check({ ip: '192.0.2.1' });
    }
    expect(lines).toEqual([]);
  });
});
