import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { d, rlsClient } from '../../../envoy/src/testing/client.js';
import type { Io } from '../io.js';
import { main } from '../main.js';
import { serveRls } from './rls.js';

const EXAMPLE_RULES = fileURLToPath(new URL('../../../../examples/public-api/rules.yaml', import.meta.url));

function captured() {
  const out: string[] = [];
  const err: string[] = [];
  const io: Io = { out: (line) => out.push(line), err: (line) => err.push(line) };
  return { io, out, err };
}

describe('sluice rls', () => {
  it('serves the example rules to a gRPC client until stopped', async () => {
    const { io, out } = captured();
    let stop = () => {};
    const stopped = new Promise<void>((resolve) => {
      stop = resolve;
    });
    const running = serveRls(['--rules', EXAMPLE_RULES, '--port', '0'], io, stopped);
    await expect
      .poll(() => out[0], { timeout: 10_000 })
      .toMatch(/^listening \d+ \(domain public_api, memory\)$/);
    const port = Number(/listening (\d+)/.exec(out[0] ?? '')?.[1]);
    const client = rlsClient(port);
    const key = d(['auth', 'api_key'], ['api_key', 'k1']);
    const response = await client.shouldRateLimit({
      domain: 'public_api',
      descriptors: [key, d(['route', '/login'], ['ip', '203.0.113.9'])],
    });
    expect(response.overall_code).toBe('OK');
    expect(
      response.statuses.map((s) => [
        s.current_limit?.name,
        s.current_limit?.requests_per_unit,
        s.limit_remaining,
      ]),
    ).toEqual([
      ['key_default', 600, 599],
      ['login_per_ip', 5, 4],
    ]);
    client.close();
    stop();
    await expect(running).resolves.toBe(0);
  });

  it('is listed, and refuses a missing --rules or an invalid file with the usual exit codes', async () => {
    const help = captured();
    await main(['--help'], help.io);
    expect(help.out.join('\n')).toMatch(/rls\s+serve Envoy's rate limit service/);
    const usage = captured();
    await expect(main(['rls'], usage.io)).resolves.toBe(2);
    expect(usage.err[0]).toContain('rls needs --rules <file>');
    const missing = captured();
    await expect(
      serveRls(['--rules', 'nope.yaml', '--port', '0'], missing.io, new Promise(() => {})),
    ).resolves.toBe(2);
    expect(missing.err[0]).toContain('nope.yaml: no such file');
  });
});
