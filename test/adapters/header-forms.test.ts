/**
 * Every header form `headers` can produce, read over real HTTP on each adapter by the parsers clients use:
 * ratelimit-header-parser (from express-rate-limit's authors) and structured-headers, a strict RFC 9651
 * parser, on every field a draft defines as a structured field.
 */
import type { HeaderFormat } from '@sluice/core';
import { parseRateLimit } from 'ratelimit-header-parser';
import { type Item, parseDictionary, parseItem, parseList } from 'structured-headers';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { type AdapterFactory, adapters, type RunningApp } from './apps.js';
import { perIp, rules, T0 } from './fixtures.js';

type Fields = Record<string, string | string[] | undefined>;

/** A field's single value; fails the test when it is missing or repeated. */
function field(headers: Fields, name: string): string {
  const value = headers[name];
  if (typeof value !== 'string') throw new Error(`expected one ${name} field, got ${JSON.stringify(value)}`);
  return value;
}

/** An item's parameters as a plain object. */
const params = (item: Item): Record<string, unknown> => Object.fromEntries(item[1]);

/** What a strict RFC 9651 parser reads from each standard form: the policy and the limit numbers. */
const STRUCTURED: Record<'draft-6' | 'draft-7' | 'draft-8', (headers: Fields) => unknown> = {
  'draft-8': (headers) => {
    const [policy] = parseList(field(headers, 'ratelimit-policy')) as Item[];
    const [limit] = parseList(field(headers, 'ratelimit')) as Item[];
    return { policy: [policy?.[0], params(policy as Item)], limit: [limit?.[0], params(limit as Item)] };
  },
  'draft-7': (headers) => {
    const [policy] = parseList(field(headers, 'ratelimit-policy')) as Item[];
    const dictionary = parseDictionary(field(headers, 'ratelimit'));
    const numbers = Object.fromEntries([...dictionary].map(([key, [value]]) => [key, value]));
    return { policy: [policy?.[0], params(policy as Item)], limit: numbers };
  },
  'draft-6': (headers) => {
    const [policy] = parseList(field(headers, 'ratelimit-policy')) as Item[];
    const item = (name: string) => parseItem(field(headers, name))[0];
    return {
      policy: [policy?.[0], params(policy as Item)],
      limit: {
        limit: item('ratelimit-limit'),
        remaining: item('ratelimit-remaining'),
        reset: item('ratelimit-reset'),
      },
    };
  },
};

const EXPECTED_STRUCTURED = {
  'draft-8': { policy: ['per_ip', { q: 2, w: 60 }], limit: ['per_ip', { r: 1, t: 60 }] },
  'draft-7': { policy: [2, { w: 60 }], limit: { limit: 2, remaining: 1, reset: 60 } },
  'draft-6': { policy: [2, { w: 60 }], limit: { limit: 2, remaining: 1, reset: 60 } },
};

/** What ratelimit-header-parser reads from each form, its reset as seconds from the test's clock. */
function parsed(headers: Fields) {
  const read = parseRateLimit(headers as Record<string, string>);
  if (read === undefined) return undefined;
  const reset = read.reset === undefined ? undefined : Math.round((read.reset.getTime() - Date.now()) / 1000);
  return { limit: read.limit, remaining: read.remaining, reset };
}

const STANDARD = ['draft-6', 'draft-7', 'draft-8'] as const;

describe.each(adapters.map((adapter) => [adapter.name, adapter] as const))(
  'header forms: %s',
  (_name, adapter: AdapterFactory) => {
    let running: RunningApp | undefined;
    afterEach(async () => {
      await running?.close();
      running = undefined;
    });

    async function firstResponse(headers: HeaderFormat, clock: () => number = () => T0) {
      running = await adapter.start({
        options: {
          clock,
          logger: { warn: () => {} },
          headers,
          rules: rules(perIp(2, { algorithm: 'sliding_log' })),
        },
      });
      return (await request(running.url).get('/search').expect(200)).headers as Fields;
    }

    it.each(STANDARD)('%s parses as structured fields with the numbers of the decision', async (form) => {
      const headers = await firstResponse(form);
      expect(STRUCTURED[form](headers)).toEqual(EXPECTED_STRUCTURED[form]);
      expect(headers['x-ratelimit-limit']).toBeUndefined();
    });

    it.each(['draft-6', 'draft-7'] as const)('%s reads in ratelimit-header-parser', async (form) => {
      expect(parsed(await firstResponse(form))).toEqual({ limit: 2, remaining: 1, reset: 60 });
    });

    it('draft-8 carries nothing ratelimit-header-parser 0.1 reads (it knows drafts 6 and 7 only)', async () => {
      const read = parsed(await firstResponse('draft'));
      expect(read?.limit).toBeNaN();
      expect(read?.remaining).toBeNaN();
    });

    it('legacy reads in ratelimit-header-parser, its reset a Unix time', async () => {
      // The parser compares the reset with the real clock: the app's clock is the real one here.
      const headers = await firstResponse('legacy', Date.now);
      const read = parsed(headers);
      expect(read).toMatchObject({ limit: 2, remaining: 1 });
      // Both ends round up to whole seconds: 60 s from now reads as 60 or 61.
      expect(read?.reset).toBeGreaterThanOrEqual(60);
      expect(read?.reset).toBeLessThanOrEqual(61);
      expect(headers.ratelimit).toBeUndefined();
      expect(headers['ratelimit-remaining']).toBeUndefined();
    });

    it.each(STANDARD)('%s+legacy sends both sets, the standard one parsed', async (form) => {
      const headers = await firstResponse(`${form}+legacy`);
      expect(STRUCTURED[form](headers)).toEqual(EXPECTED_STRUCTURED[form]);
      expect(field(headers, 'x-ratelimit-limit')).toBe('2');
      expect(field(headers, 'x-ratelimit-remaining')).toBe('1');
      expect(field(headers, 'x-ratelimit-reset')).toBe(String(T0 / 1000 + 60));
    });

    it.each(STANDARD)('%s on a denial: remaining 0, its reset the Retry-After', async (form) => {
      await firstResponse(form);
      const url = running?.url ?? 'no app';
      await request(url).get('/search').expect(200);
      const denied = (await request(url).get('/search').expect(429)).headers as Fields;
      expect(field(denied, 'retry-after')).toBe('60');
      const numbers = STRUCTURED[form](denied) as { limit: unknown };
      const expected = {
        'draft-8': ['per_ip', { r: 0, t: 60 }],
        'draft-7': { limit: 2, remaining: 0, reset: 60 },
        'draft-6': { limit: 2, remaining: 0, reset: 60 },
      }[form];
      expect(numbers.limit).toEqual(expected);
    });
  },
);
