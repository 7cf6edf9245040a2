/**
 * envoyproxy/ratelimit's documented examples (its README, "Examples"), as config files in fixtures/ratelimit,
 * served by the service and answered as that documentation says.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createRateLimitService, type RateLimitService } from './service.js';
import { type Descriptor, d, rlsClient } from './testing/client.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/ratelimit/', import.meta.url));
const running: { service: RateLimitService; client: ReturnType<typeof rlsClient> }[] = [];

afterAll(async () => {
  for (const { service, client } of running) {
    client.close();
    await service.close();
  }
});

/** Serves one example; `ask` sends descriptors and returns each status's code and configured limit. */
async function serve(example: string) {
  const service = await createRateLimitService({
    rules: `${FIXTURES}${example}.yaml`,
    port: 0,
    watch: false,
    logger: { warn() {} },
  });
  const client = rlsClient(service.port);
  running.push({ service, client });
  const domain = service.limiter.rules.domain;
  return async (...descriptors: Descriptor[]) => {
    const response = await client.shouldRateLimit({ domain, descriptors });
    return response.statuses.map((s) => [
      s.code,
      s.current_limit?.requests_per_unit ?? null,
      s.limit_remaining,
    ]);
  };
}

/** Sends the same descriptors `n` times, within one second's fixed window; the codes of the last answer. */
async function times(ask: Awaited<ReturnType<typeof serve>>, n: number, ...descriptors: Descriptor[]) {
  await new Promise((resolve) => setTimeout(resolve, 1005 - (Date.now() % 1000)));
  let last: unknown[][] = [];
  for (let i = 0; i < n; i++) last = await ask(...descriptors);
  return last.map((status) => status[0]);
}

describe('envoyproxy/ratelimit README examples', () => {
  it('1: each database value its own 500 a second; an unlisted value no limit', async () => {
    const ask = await serve('example1');
    expect(await ask(d(['database', 'users']), d(['database', 'default']), d(['database', 'other']))).toEqual(
      [
        ['OK', 500, 499],
        ['OK', 500, 499],
        ['OK', null, 0],
      ],
    );
  });

  it('2: nested descriptors; a key without a value counts each value on its own', async () => {
    const ask = await serve('example2');
    const marketing = d(['message_type', 'marketing'], ['to_number', '2061111111']);
    const any = d(['to_number', '2061111111']);
    expect(await ask(marketing, any)).toEqual([
      ['OK', 5, 4],
      ['OK', 100, 99],
    ]);
    expect(await times(ask, 4, marketing)).toEqual(['OK']);
    expect(await ask(marketing, any)).toEqual([
      ['OVER_LIMIT', 5, 0],
      ['OK', 100, 98],
    ]);
    expect(await ask(d(['message_type', 'marketing'], ['to_number', '2062222222']))).toEqual([['OK', 5, 4]]);
  });

  it('3: the most specific match wins: the listed address is refused, the others get 10 a second', async () => {
    const ask = await serve('example3');
    expect(await ask(d(['remote_address', '50.0.0.5']))).toEqual([['OVER_LIMIT', 0, 0]]);
    expect(await ask(d(['remote_address', '50.0.0.1']))).toEqual([['OK', 10, 9]]);
    expect(await times(ask, 10, d(['remote_address', '50.0.0.2']))).toEqual(['OK']);
    expect(await times(ask, 11, d(['remote_address', '50.0.0.3']))).toEqual(['OVER_LIMIT']);
  });

  it('4: a limit applies at its own depth only', async () => {
    const ask = await serve('example4');
    expect(await ask(d(['key', 'value'], ['subkey', 'subvalue']))).toEqual([['OK', 300, 299]]);
    expect(await ask(d(['key', 'value']))).toEqual([['OK', null, 0]]);
    expect(await ask(d(['key', 'value'], ['subkey', 's'], ['deeper', 'x']))).toEqual([['OK', null, 0]]);
  });

  it('5: an unlimited descriptor is OK with limit_remaining at the uint32 maximum', async () => {
    const ask = await serve('example5');
    expect(await ask(d(['ldap', 'x']), d(['azure', 'y']))).toEqual([
      ['OK', null, 4_294_967_295],
      ['OK', 100, 99],
    ]);
  });

  it('6: shadow_mode reports and never denies; the other user is limited', async () => {
    const ask = await serve('example6');
    const userA = d(['service', 'auth-service'], ['user', 'user-a']);
    const userB = d(['service', 'auth-service'], ['user', 'user-b']);
    expect(await times(ask, 5, userA)).toEqual(['OK']);
    expect(await times(ask, 3, userB)).toEqual(['OVER_LIMIT']);
  });

  it('7: replaces: with both descriptors, the named limit is replaced and not counted', async () => {
    const ask = await serve('example7');
    const one = d(['key_1', 'value_1'], ['user', 'bkthomps']);
    const two = d(['key_2', 'value_2'], ['user', 'bkthomps']);
    // Together: 10 a second (the replaced 5 a second is not counted).
    expect(await times(ask, 7, one, two)).toEqual(['OK', 'OK']);
    // Alone, the first still has its 5 a second, untouched by the 7 calls above.
    expect(await ask(one)).toEqual([['OK', 5, 4]]);
  });
});
