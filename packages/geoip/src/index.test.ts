import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildMmdb } from '../../../test/support/mmdb.js';
import { GeoipError, geoipDescriptors, UNKNOWN } from './index.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-geoip-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, bytes: Buffer | string): string {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
}

const ASN_DB = buildMmdb([
  {
    network: '203.0.113.0/24',
    data: { autonomous_system_number: 64500, autonomous_system_organization: 'Hosting' },
  },
]);
const COUNTRY_DB = buildMmdb([
  { network: '203.0.113.0/24', data: { country: { iso_code: 'de' } } },
  { network: '198.51.100.0/24', data: { registered_country: { iso_code: 'FR' } } },
]);

describe('geoipDescriptors', () => {
  it('refuses a missing database at start with a typed error naming the file', () => {
    const path = join(dir, 'absent.mmdb');
    const start = () => geoipDescriptors({ databases: [path] });
    expect(start).toThrow(GeoipError);
    expect(start).toThrow(/absent\.mmdb: cannot be read/);
    try {
      start();
    } catch (error) {
      expect((error as GeoipError).code).toBe('ERR_SLUICE_GEOIP');
      expect((error as GeoipError).path).toBe(path);
    }
  });

  it('refuses a corrupt database at start', () => {
    const path = write('corrupt.mmdb', 'not a database at all');
    expect(() => geoipDescriptors({ databases: [path] })).toThrow(/corrupt\.mmdb: is not an MMDB database/);
    const cut = write('cut.mmdb', ASN_DB.subarray(0, 40));
    expect(() => geoipDescriptors({ databases: [cut] })).toThrow(GeoipError);
  });

  it('refuses an unknown option with a did-you-mean, and no databases', () => {
    expect(() => geoipDescriptors({ databases: [write('a.mmdb', ASN_DB)], pollMS: 5 } as never)).toThrow(
      /unknown option "pollMS" \(did you mean "pollMs"\?\)/,
    );
    expect(() => geoipDescriptors({ databases: [] })).toThrow(/needs databases/);
  });

  it('merges an ASN and a country database; a field neither has is unknown', async () => {
    const geo = geoipDescriptors({
      databases: [write('asn.mmdb', ASN_DB), write('country.mmdb', COUNTRY_DB)],
    });
    expect(geo.names).toEqual(['asn', 'as_org', 'country']);
    expect(geo.describe('203.0.113.4')).toEqual({ asn: 'AS64500', as_org: 'Hosting', country: 'DE' });
    expect(geo.describe('198.51.100.4')).toEqual({ asn: UNKNOWN, as_org: UNKNOWN, country: 'FR' });
    expect(geo.describe('10.0.0.1')).toEqual({ asn: UNKNOWN, as_org: UNKNOWN, country: UNKNOWN });
    expect(geo.describe('2001:db8::1')).toEqual({ asn: UNKNOWN, as_org: UNKNOWN, country: UNKNOWN });
    await geo.close();
  });

  it('reads the IPinfo and ip-location-db field names', async () => {
    const path = write(
      'ipinfo.mmdb',
      buildMmdb([
        { network: '192.0.2.0/24', data: { asn: 'AS13335', as_name: 'Cloudflare', country_code: 'US' } },
      ]),
    );
    const geo = geoipDescriptors({ databases: [path] });
    expect(geo.describe('192.0.2.1')).toEqual({ asn: 'AS13335', as_org: 'Cloudflare', country: 'US' });
    await geo.close();
  });

  it('reloads a changed file by itself, and keeps the last good one when the new file is broken', async () => {
    const path = write('live.mmdb', COUNTRY_DB);
    const errors: GeoipError[] = [];
    const reloaded: string[] = [];
    const geo = geoipDescriptors({
      databases: [path],
      pollMs: 20,
      onError: (error) => errors.push(error),
      onReload: (file) => reloaded.push(file),
    });
    writeFileSync(path, buildMmdb([{ network: '198.51.100.0/24', data: { country: { iso_code: 'IT' } } }]));
    await expect.poll(() => reloaded.length, { timeout: 5000 }).toBe(1);
    expect(geo.describe('198.51.100.1').country).toBe('IT');
    writeFileSync(path, 'garbage, half written');
    await expect.poll(() => errors.length, { timeout: 5000 }).toBe(1);
    expect(errors[0]?.message).toMatch(/live\.mmdb: is not an MMDB database/);
    expect(geo.describe('198.51.100.1').country).toBe('IT');
    await geo.close();
  });
});
