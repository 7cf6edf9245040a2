/**
 * Network descriptors over loopback HTTP on Fastify, Express and Koa: `asn`, `as_org` and `country` from an MMDB
 * file these tests build (test/support/mmdb.ts) and read with @sluice/geoip, matched and keyed on like any
 * descriptor; ASN and TOR exit lists that reload live; a database replaced while serving.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileList, type RuleSpec } from '@sluice/core';
import { type GeoipDescriptors, geoipDescriptors } from '@sluice/geoip';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  FRAMEWORKS,
  type Framework,
  type LimiterSetup,
  startServer,
  type TestServer,
} from './client/servers.js';
import { buildMmdb, type MmdbNetwork } from './support/mmdb.js';

const T0 = Date.UTC(2026, 11, 1, 12, 0, 0);
const clock = () => T0;
const dir = mkdtempSync(join(tmpdir(), 'sluice-geoip-http-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A hosting provider in Germany, a home ISP in France, and an IPv6 range in the Netherlands. */
const NETWORKS: readonly MmdbNetwork[] = [
  {
    network: '203.0.113.0/24',
    data: {
      autonomous_system_number: 64500,
      autonomous_system_organization: 'Example Hosting',
      country: { iso_code: 'DE' },
    },
  },
  {
    network: '198.51.100.0/24',
    data: {
      autonomous_system_number: 64501,
      autonomous_system_organization: 'Example Home ISP',
      country: { iso_code: 'FR' },
    },
  },
  { network: '2001:db8::/32', data: { autonomous_system_number: 64502, country: { iso_code: 'NL' } } },
];

function writeDatabase(name: string, networks: readonly MmdbNetwork[]): string {
  const path = join(dir, name);
  writeFileSync(path, buildMmdb(networks));
  return path;
}

function writeList(name: string, lines: readonly string[]): string {
  const path = join(dir, name);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

describe.each(FRAMEWORKS.map((framework) => [framework] as const))('on %s', (framework: Framework) => {
  let server: TestServer | undefined;
  let geo: GeoipDescriptors | undefined;
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await server?.close();
    await geo?.close();
    for (const close of closers.splice(0)) await close();
    server = undefined;
    geo = undefined;
  });

  async function start(rules: RuleSpec[], setup: Partial<LimiterSetup> = {}): Promise<string> {
    geo ??= geoipDescriptors({ databases: [writeDatabase(`${framework}.mmdb`, NETWORKS)] });
    server = await startServer(framework, {
      clock,
      trustProxy: true,
      addressDescriptors: geo,
      rules: { domain: 'geo', rules },
      ...setup,
    });
    return server.url;
  }

  const get = (url: string, from: string) => fetch(`${url}/items`, { headers: { 'x-forwarded-for': from } });

  async function statuses(url: string, from: string, times: number): Promise<number[]> {
    const seen: number[] = [];
    for (let i = 0; i < times; i++) seen.push((await get(url, from)).status);
    return seen;
  }

  it('denies a list of hosting ASNs, and the list reloads live', async () => {
    const path = writeList(`${framework}-asns.txt`, ['# hosting', 'AS64500']);
    const hosting = fileList(path, { debounceMs: 10 });
    closers.push(() => hosting.close());
    const url = await start([{ name: 'no_hosting', match: { asn: { list: 'hosting' } }, action: 'deny' }], {
      lists: { hosting },
    });
    expect((await get(url, '203.0.113.7')).status).toBe(403);
    expect((await get(url, '198.51.100.7')).status).toBe(200);
    writeFileSync(path, 'AS64501\n');
    await hosting.reload();
    expect((await get(url, '203.0.113.7')).status).toBe(200);
    expect((await get(url, '198.51.100.7')).status).toBe(403);
  });

  it('keys a limit by country: addresses of one country share it, others have their own', async () => {
    const url = await start([
      { name: 'per_country', key: ['country'], limit: { requests: 2, per: '1m' }, algorithm: 'fixed_window' },
    ]);
    expect(await statuses(url, '203.0.113.1', 1)).toEqual([200]);
    expect(await statuses(url, '203.0.113.2', 2)).toEqual([200, 429]);
    expect(await statuses(url, '198.51.100.1', 2)).toEqual([200, 200]);
    expect(await statuses(url, '2001:db8::5', 3)).toEqual([200, 200, 429]);
  });

  it('gives anonymous traffic from a data centre a tighter limit than the rest', async () => {
    const url = await start([
      {
        name: 'anonymous_hosting',
        match: { auth: 'anonymous', as_org: 'Example Hosting' },
        key: ['ip'],
        limit: { requests: 1, per: '1m' },
        algorithm: 'fixed_window',
      },
      { name: 'per_ip', key: ['ip'], limit: { requests: 3, per: '1m' }, algorithm: 'fixed_window' },
    ]);
    expect(await statuses(url, '203.0.113.9', 2)).toEqual([200, 429]);
    expect(await statuses(url, '198.51.100.9', 4)).toEqual([200, 200, 200, 429]);
  });

  it('gives an address the database lacks the value unknown, never an error', async () => {
    const url = await start([
      {
        name: 'unknown_origin',
        match: { country: 'unknown', asn: 'unknown', as_org: 'unknown' },
        action: 'deny',
      },
    ]);
    expect((await get(url, '192.0.2.1')).status).toBe(403);
    expect((await get(url, '2001:db9::1')).status).toBe(403);
    expect((await get(url, '198.51.100.1')).status).toBe(200);
  });

  it('denies a TOR exit list file on client_ip, reloaded live', async () => {
    const path = writeList(`${framework}-tor.txt`, ['198.51.100.77']);
    const tor = fileList(path, { debounceMs: 10 });
    closers.push(() => tor.close());
    const url = await start([{ name: 'no_tor', match: { client_ip: { list: 'tor' } }, action: 'deny' }], {
      lists: { tor },
    });
    expect((await get(url, '198.51.100.77')).status).toBe(403);
    writeFileSync(path, '198.51.100.78\n');
    await tor.reload();
    expect((await get(url, '198.51.100.77')).status).toBe(200);
    expect((await get(url, '198.51.100.78')).status).toBe(403);
  });

  it('looks an address up once per request, and not at all when no rule reads a network descriptor', async () => {
    geo = geoipDescriptors({ databases: [writeDatabase(`${framework}-count.mmdb`, NETWORKS)] });
    const real = geo;
    let lookups = 0;
    const counted: GeoipDescriptors = {
      ...real,
      describe: (address) => {
        lookups += 1;
        return real.describe(address);
      },
    };
    const perIp = {
      name: 'per_ip',
      key: ['ip'],
      limit: { requests: 9, per: '1m' },
      algorithm: 'fixed_window',
    };
    let url = await start([perIp as RuleSpec], { addressDescriptors: counted });
    await statuses(url, '203.0.113.1', 3);
    expect(lookups).toBe(0);
    await server?.close();
    url = await start(
      [
        { name: 'per_country', key: ['country', 'asn'], limit: { requests: 9, per: '1m' } },
        perIp as RuleSpec,
      ],
      { addressDescriptors: counted },
    );
    await statuses(url, '203.0.113.1', 3);
    expect(lookups).toBe(3);
  });

  it('reads a replaced database: the new country applies on the next request', async () => {
    const path = writeDatabase(`${framework}-replaced.mmdb`, NETWORKS);
    geo = geoipDescriptors({ databases: [path] });
    const url = await start([{ name: 'no_de', match: { country: 'DE' }, action: 'deny' }]);
    expect((await get(url, '198.51.100.1')).status).toBe(200);
    writeFileSync(
      path,
      buildMmdb([
        { network: '198.51.100.0/24', data: { country: { iso_code: 'DE' } } },
        ...NETWORKS.slice(0, 1),
      ]),
    );
    await geo.reload();
    expect((await get(url, '198.51.100.1')).status).toBe(403);
  });
});
