/**
 * Issue 26, streams by bytes: `byteThrottle` over real HTTP (a Node server, fetch as the client), on MemoryStore and on a private Redis. A key's
 * download is paced to 50 KB/s by a leaky_bucket rule whose cost is bytes (200 KB take ~4 s), two downloads
 * of one key share the rate while another key's runs at full rate, a client that leaves mid-stream gives its
 * queue place back (the next download of its key starts at once) and the app only hears of it through
 * pipeline's callback, and an upload (a request body) is paced the same way.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ConfigError, compileRules, createLimiter, type Limiter } from '@sluice/core';
import type { Store } from '@sluice/core/store';
import { RedisStore } from '@sluice/redis';
import { type ByteThrottle, byteThrottle, ThrottlePieceTooLargeError } from '@sluice/websocket';
import { afterEach, describe, expect, it } from 'vitest';
import { randomPrefix } from '../support/redis.js';
import { privateRedis, sleep } from './privateRedis.js';

const RATE = 50_000;

function bytesLimiter(burst = 100_000, store?: Store): Limiter {
  return createLimiter({
    ...(store === undefined ? {} : { store }),
    rules: compileRules({
      domain: 'bytes',
      rules: [
        {
          name: 'bytes_per_user',
          match: {},
          key: ['user'],
          algorithm: 'leaky_bucket',
          limit: { requests: RATE, per: '1s', burst },
        },
      ],
    }),
  });
}

/** `GET /file?user=u&size=n` streams n bytes paced for u; `POST /upload?user=u` reads the body paced. */
function app(throttle: ByteThrottle, outcomes: (Error | undefined)[]) {
  return async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const user = url.searchParams.get('user') ?? 'anonymous';
    if (req.method === 'POST') {
      const started = Date.now();
      let bytes = 0;
      const sink = new Writable({
        write(chunk: Buffer, _encoding, done) {
          bytes += chunk.length;
          done();
        },
      });
      await pipeline(req, throttle.stream({ user }), sink);
      res.end(JSON.stringify({ bytes, ms: Date.now() - started }));
      return;
    }
    const size = Number(url.searchParams.get('size'));
    const chunk = Number(url.searchParams.get('chunk') ?? 10_000);
    const body = Readable.from(
      (function* () {
        for (let sent = 0; sent < size; sent += chunk) yield Buffer.alloc(Math.min(chunk, size - sent), 97);
      })(),
    );
    res.setHeader('content-type', 'application/octet-stream');
    // The app hears of a client gone through pipeline's rejection, never an uncaught throw.
    await pipeline(body, throttle.stream({ user }), res).then(
      () => outcomes.push(undefined),
      (error: Error) => outcomes.push(error),
    );
  };
}

let server: Server | undefined;
let limiter: Limiter | undefined;

async function start(throttle: ByteThrottle): Promise<{ base: string; outcomes: (Error | undefined)[] }> {
  const outcomes: (Error | undefined)[] = [];
  const handler = app(throttle, outcomes);
  server = createServer((req, res) => void handler(req, res));
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, outcomes };
}

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await limiter?.close();
});

/** Downloads a whole body: its size and how long it took. */
async function download(url: string): Promise<{ bytes: number; ms: number }> {
  const started = Date.now();
  const res = await fetch(url);
  const bytes = (await res.arrayBuffer()).byteLength;
  return { bytes, ms: Date.now() - started };
}

/** A 200 KB download of one key through `paced`'s rule: about 4 s at 50 KB/s. */
async function expectPacedDownload(paced: Limiter): Promise<void> {
  limiter = paced;
  const { base } = await start(byteThrottle({ limiter }));
  const { bytes, ms } = await download(`${base}/file?user=u&size=200000`);
  expect(bytes).toBe(200_000);
  // The first 16 KB go at once, the other 184 KB at 50 KB/s: 3.7 s; an unpaced body takes milliseconds.
  expect(ms).toBeGreaterThan(3_200);
  expect(ms).toBeLessThan(6_000);
}

/** A client leaves mid-stream: its queue place goes back (the next download starts at once), the app hears of it through pipeline. */
async function expectPlaceGivenBack(paced: Limiter): Promise<void> {
  limiter = paced;
  // Pieces of 1 s each: a place held by the gone stream would delay the next download by a second.
  const { base, outcomes } = await start(byteThrottle({ limiter, chunkBytes: 50_000 }));
  const leaving = new AbortController();
  const res = await fetch(`${base}/file?user=u&size=200000&chunk=50000`, { signal: leaving.signal });
  const reader = res.body!.getReader();
  await reader.read(); // the first piece came at once; the second waits its place (until ~1 s)
  await sleep(400);
  leaving.abort();
  await reader.cancel().catch(() => {});
  await sleep(100);

  const started = Date.now();
  const next = await fetch(`${base}/file?user=u&size=1000`);
  await next.arrayBuffer();
  // What is left of the first piece (~0.5 s), not a second piece more (~1.5 s).
  expect(Date.now() - started).toBeLessThan(1_000);
  await until(() => outcomes.length === 2);
  expect(outcomes[0]).toBeInstanceOf(Error);
  expect((outcomes[0] as NodeJS.ErrnoException).code).toBe('ERR_STREAM_PREMATURE_CLOSE');
  expect(outcomes[1]).toBeUndefined();
}

describe('byteThrottle over HTTP', () => {
  it('paces a 200 KB download to 50 KB/s: about 4 s', () => expectPacedDownload(bytesLimiter()), 15_000);

  it('two downloads of one key share its rate; another key runs at its own', async () => {
    limiter = bytesLimiter();
    const { base } = await start(byteThrottle({ limiter }));
    const [a, b, other] = await Promise.all([
      download(`${base}/file?user=u&size=100000`),
      download(`${base}/file?user=u&size=100000`),
      download(`${base}/file?user=v&size=100000`),
    ]);
    expect([a.bytes, b.bytes, other.bytes]).toEqual([100_000, 100_000, 100_000]);
    // u: 200 KB at 50 KB/s between the two (~3.7 s); v alone: 100 KB (~1.7 s).
    expect(Math.max(a.ms, b.ms)).toBeGreaterThan(3_200);
    expect(other.ms).toBeLessThan(Math.max(a.ms, b.ms) - 1_000);
  }, 15_000);

  it(
    'a client that leaves mid-stream gives its queue place back; the app hears of it through pipeline only',
    () => expectPlaceGivenBack(bytesLimiter()),
    15_000,
  );

  it('paces an upload (a slow POST): 200 KB read at 50 KB/s', async () => {
    limiter = bytesLimiter();
    const { base } = await start(byteThrottle({ limiter }));
    const started = Date.now();
    const res = await fetch(`${base}/upload?user=u`, { method: 'POST', body: Buffer.alloc(200_000, 98) });
    const answer = (await res.json()) as { bytes: number; ms: number };
    expect(answer.bytes).toBe(200_000);
    expect(answer.ms).toBeGreaterThan(3_200);
    expect(Date.now() - started).toBeLessThan(6_000);
  }, 15_000);

  it('fails the stream with a typed error when a piece can never fit, and checks its options', async () => {
    const small = bytesLimiter(1_000);
    limiter = small;
    const throttle = byteThrottle({ limiter: small, chunkBytes: 4_000 });
    const failed = await pipeline(
      Readable.from([Buffer.alloc(4_000)]),
      throttle.stream({ user: 'u' }),
      new Writable({ write: (_c, _e, done) => done() }),
    ).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(ThrottlePieceTooLargeError);
    expect(() => byteThrottle({ limiter: small, chunkBytes: 0 })).toThrow(ConfigError);
    expect(() => byteThrottle({ limiter: small, chunkbytes: 10 } as never)).toThrow(/chunkBytes/);
  });
});

async function until(what: () => boolean, ms = 3_000): Promise<void> {
  const end = Date.now() + ms;
  while (!what()) {
    if (Date.now() > end) throw new Error('timed out');
    await sleep(20);
  }
}

describe('byteThrottle on RedisStore (a private redis-server)', () => {
  const redis = privateRedis();
  const onRedis = () =>
    bytesLimiter(100_000, new RedisStore({ client: redis.client, prefix: randomPrefix() }));

  it('paces a 200 KB download to 50 KB/s: about 4 s', () => expectPacedDownload(onRedis()), 15_000);

  it(
    'a client that leaves mid-stream gives its place back in Redis: the next download starts at once',
    () => expectPlaceGivenBack(onRedis()),
    15_000,
  );
});
