import { afterEach, describe, expect, it } from 'vitest';
import { adapters, type RunningApp } from './adapters/apps.js';

const rules = {
  domain: 'identity',
  rules: [{ name: 'per_ip', key: ['ip'], limit: { requests: 2, per: '1m' } }],
};

describe.each(adapters)('client identity ($name)', (adapter) => {
  let running: RunningApp | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  async function start(warnings: string[] = [], trustProxy = true): Promise<RunningApp> {
    running = await adapter.start({
      options: { rules, logger: { warn: (message: string) => void warnings.push(message) } },
      trustProxy,
    });
    return running;
  }

  async function statuses(url: string, headers: readonly Record<string, string>[]): Promise<number[]> {
    const seen: number[] = [];
    for (const header of headers) seen.push((await fetch(`${url}/search`, { headers: header })).status);
    return seen;
  }

  it('keys IP:port and [v6]:port by the address: a new source port is not a new client', async () => {
    const { url } = await start();
    const v4 = ['203.0.113.7:40001', '203.0.113.7:40002', '203.0.113.7:40003'];
    expect(
      await statuses(
        url,
        v4.map((ip) => ({ 'x-forwarded-for': ip })),
      ),
    ).toEqual([200, 200, 429]);
    const v6 = ['[2001:db8::1]:40001', '[2001:db8::1]:40002', '[2001:db8::1]:40003'];
    expect(
      await statuses(
        url,
        v6.map((ip) => ({ 'x-forwarded-for': ip })),
      ),
    ).toEqual([200, 200, 429]);
  });

  it('keys a NAT64 address by the IPv4 client it carries', async () => {
    const { url } = await start();
    const sent = ['203.0.113.9', '64:ff9b::cb00:7109', '64:ff9b::203.0.113.9'];
    expect(
      await statuses(
        url,
        sent.map((ip) => ({ 'x-forwarded-for': ip })),
      ),
    ).toEqual([200, 200, 429]);
  });

  it('ignores a Forwarded header, and says so once with SLUICE_FORWARDED_IGNORED', async () => {
    const warnings: string[] = [];
    const { url } = await start(warnings, false);
    const sent = ['for=198.51.100.1', 'for=198.51.100.2', 'for=198.51.100.3'];
    // Every request comes from the same socket address: one client, whatever Forwarded claims.
    expect(
      await statuses(
        url,
        sent.map((value) => ({ forwarded: value })),
      ),
    ).toEqual([200, 200, 429]);
    expect(warnings.filter((line) => line.includes('[SLUICE_FORWARDED_IGNORED]'))).toHaveLength(1);
  });
});
