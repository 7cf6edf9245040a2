import { describe, expect, test } from 'vitest';
import { UsageError } from '../io.js';
import { fieldMap } from './fields.js';
import { lineParser } from './logLine.js';
import { parseLogTime, parseTimeLocal } from './logTime.js';
import { ADAPTER_DEFAULTS, type ReplayRequest } from './request.js';

const COMBINED =
  '2001:db8:5:7::beef - - [03/Mar/2026:10:00:05 +0100] "GET /Products/42/?ref=x HTTP/1.1" 200 1811 "-" "curl/8.5.0" "k_live_acme_1" "acme"';

function parsed(
  line: string,
  fields: string[] = [],
  format: 'auto' | 'combined' | 'json' | 'decisions' = 'auto',
) {
  return lineParser(format, fieldMap(fields), ADAPTER_DEFAULTS)(line);
}

function request(line: string, fields: string[] = []): ReplayRequest {
  const result = parsed(line, fields);
  if (typeof result === 'string') throw new Error(`not a request: ${result}`);
  return result;
}

describe('log times', () => {
  test('$time_local keeps its offset; ISO, epoch seconds and ms are read; anything else is undefined', () => {
    expect(parseTimeLocal('03/Mar/2026:10:00:05 +0100')).toBe(Date.UTC(2026, 2, 3, 9, 0, 5));
    expect(parseTimeLocal('03/Mar/2026:10:00:05 -0230')).toBe(Date.UTC(2026, 2, 3, 12, 30, 5));
    expect(parseLogTime('2026-03-03T09:00:05.250Z')).toBe(Date.UTC(2026, 2, 3, 9, 0, 5, 250));
    expect(parseLogTime(1772528405.25)).toBe(1772528405250);
    expect(parseLogTime('1772528405')).toBe(1772528405000);
    expect(parseLogTime(1772528405250)).toBe(1772528405250);
    expect(parseLogTime('03/Foo/2026:10:00:05 +0100')).toBeUndefined();
    expect(parseLogTime('yesterday')).toBeUndefined();
    expect(parseLogTime(null)).toBeUndefined();
  });
});

describe('combined lines', () => {
  test('descriptors as an adapter builds them: route normalised, IPv6 /64, api key and tenant from extra fields', () => {
    const r = request(COMBINED, ['api_key=extra.1', 'tenant=extra.2']);
    expect(r.time).toBe(Date.UTC(2026, 2, 3, 9, 0, 5));
    expect(r.status).toBe(200);
    expect(r.descriptors).toEqual({
      ip: '2001:db8:5:7::/64',
      method: 'GET',
      route: '/products/42',
      api_key: 'k_live_acme_1',
      tenant: 'acme',
      auth: 'api_key',
    });
  });

  test('without a mapping the extra fields are not read; `-` is no value', () => {
    expect(request(COMBINED).descriptors).toMatchObject({ auth: 'anonymous' });
    expect(request(COMBINED).descriptors.api_key).toBeUndefined();
    const dash = COMBINED.replace('"k_live_acme_1"', '"-"');
    expect(request(dash, ['api_key=extra.1']).descriptors.auth).toBe('anonymous');
  });

  test('an escaped quote inside the user agent does not shift the appended fields', () => {
    const escaped = COMBINED.replace('"curl/8.5.0"', '"evil \\"agent\\" 1.0"');
    expect(escaped).toContain('\\"agent\\"');
    expect(request(escaped, ['api_key=extra.1', 'tenant=extra.2']).descriptors).toMatchObject({
      api_key: 'k_live_acme_1',
      tenant: 'acme',
    });
  });

  test('garbled lines and request lines are unreadable', () => {
    expect(parsed('garbage')).toBe('unreadable');
    expect(parsed(COMBINED.replace('"GET /Products/42/?ref=x HTTP/1.1"', '"-"'))).toBe('unreadable');
    expect(parsed(COMBINED.replace('03/Mar/2026', '33/Foo/2026'))).toBe('unreadable');
  });
});

describe('JSON lines', () => {
  const line = JSON.stringify({
    '@timestamp': '2026-03-03T09:00:05Z',
    remote_addr: '::ffff:198.51.100.7',
    request: 'POST /Api/v1/Orders HTTP/1.1',
    status: 429,
    headers: { 'x-api-key': 'k1', 'x-tenant': 'globex' },
    client: { plan: 'gold' },
  });

  test('default field names, nginx $request, nested headers; other descriptors through --field', () => {
    const r = request(line, ['tenant=headers.x-tenant', 'plan=client.plan']);
    expect(r.time).toBe(Date.UTC(2026, 2, 3, 9, 0, 5));
    expect(r.status).toBe(429);
    expect(r.descriptors).toEqual({
      ip: '198.51.100.7',
      method: 'POST',
      route: '/api/v1/orders',
      api_key: 'k1',
      tenant: 'globex',
      plan: 'gold',
      auth: 'api_key',
    });
  });

  test('--field paths come before the defaults, and one name may have several paths (combined and JSON alike)', () => {
    const both = ['tenant=extra.2', 'tenant=headers.x-tenant', 'ip=client.addr'];
    const custom = JSON.stringify({
      time: 1772528405,
      path: '/x',
      remote_addr: '192.0.2.1',
      client: { addr: '192.0.2.9' },
      headers: { 'x-tenant': 't' },
    });
    expect(request(custom, both).descriptors).toMatchObject({ ip: '192.0.2.9', tenant: 't' });
    expect(request(COMBINED, both).descriptors.tenant).toBe('acme');
  });

  test('lines without a time or a path, and text that is not JSON, are unreadable', () => {
    expect(parsed('{"path": "/x"}')).toBe('unreadable');
    expect(parsed('{"time": "2026-03-03T09:00:05Z"}')).toBe('unreadable');
    expect(parsed('{not json', [], 'json')).toBe('unreadable');
    expect(parsed('[1, 2]', [], 'json')).toBe('unreadable');
  });

  test('decision logs replay their logged descriptors; other Sluice lines are ignored', () => {
    const decision = JSON.stringify({
      event: 'sluice.decision',
      ts: 1772528405000,
      descriptors: { ip: 'hashed-ip', route: '/search', auth: 'anonymous' },
      results: [],
    });
    expect(request(decision)).toEqual({
      time: 1772528405000,
      descriptors: { ip: 'hashed-ip', route: '/search', auth: 'anonymous' },
    });
    expect(parsed('{"event": "sluice.rules_loaded", "version": "x"}')).toBe('ignored');
    expect(parsed(line, [], 'decisions')).toBe('ignored');
  });
});

test('a --field that is not name=path is a usage error', () => {
  for (const bad of ['tenant', '=x', 'tenant=', 'Bad-Name=x'])
    expect(() => fieldMap([bad])).toThrow(UsageError);
});
