import { describe, expect, it } from 'vitest';
import { planRequest } from './plan.js';

const URL_A = 'http://127.0.0.1:9/a';
const none = { idempotencyKey: false, attemptHeader: false } as const;

describe('planRequest', () => {
  it('retries idempotent methods, and POST or PATCH only with an Idempotency-Key', () => {
    for (const method of ['GET', 'head', 'PUT', 'DELETE', 'OPTIONS']) {
      expect(planRequest(URL_A, { method }, none).noRetry).toBeUndefined();
    }
    expect(planRequest(URL_A, { method: 'POST' }, none).noRetry).toBe('not_idempotent');
    expect(planRequest(URL_A, { method: 'PATCH', body: 'x' }, none).noRetry).toBe('not_idempotent');
    const keyed = planRequest(URL_A, { method: 'POST', headers: { 'Idempotency-Key': 'k1' } }, none);
    expect(keyed.noRetry).toBeUndefined();
  });

  it('adds one key per logical request, the same on every attempt, and keeps a key the caller gave', () => {
    let made = 0;
    const settings = { idempotencyKey: () => `key-${++made}`, attemptHeader: false } as const;
    const plan = planRequest(URL_A, { method: 'POST', body: '{}' }, settings);
    expect(plan.noRetry).toBeUndefined();
    const keys = [1, 2, 3].map((attempt) =>
      new Headers(plan.args(attempt)[1]?.headers).get('idempotency-key'),
    );
    expect(keys).toEqual(['key-1', 'key-1', 'key-1']);
    const own = planRequest(URL_A, { method: 'POST', headers: { 'idempotency-key': 'mine' } }, settings);
    expect(new Headers(own.args(1)[1]?.headers).get('idempotency-key')).toBe('mine');
    expect(new Headers(planRequest(URL_A, {}, settings).args(1)[1]?.headers).has('idempotency-key')).toBe(
      false,
    );
    expect(made).toBe(1);
  });

  it('names the attempt on retries only', () => {
    const plan = planRequest(
      URL_A,
      { headers: { a: 'b' } },
      { idempotencyKey: false, attemptHeader: 'x-attempt' },
    );
    const attempt = (n: number) => new Headers(plan.args(n)[1]?.headers);
    expect(attempt(1).has('x-attempt')).toBe(false);
    expect(attempt(2).get('x-attempt')).toBe('2');
    expect(attempt(3).get('x-attempt')).toBe('3');
    expect(attempt(3).get('a')).toBe('b');
  });

  it('names the retry on retries (1, 2, ...), beside the attempt; a first attempt goes out untouched', () => {
    const init = { headers: { a: 'b' } };
    const plan = planRequest(URL_A, init, {
      ...none,
      retryHeader: 'Retry-Attempt',
      attemptHeader: 'x-attempt',
    });
    const attempt = (n: number) => new Headers(plan.args(n)[1]?.headers);
    expect(plan.args(1)).toEqual([URL_A, init]);
    expect(attempt(2).get('retry-attempt')).toBe('1');
    expect(attempt(2).get('x-attempt')).toBe('2');
    expect(attempt(3).get('retry-attempt')).toBe('2');
    expect(attempt(3).get('a')).toBe('b');
    expect(
      new Headers(planRequest(URL_A, init, { ...none, retryHeader: false }).args(2)[1]?.headers).has(
        'retry-attempt',
      ),
    ).toBe(false);
  });

  it('passes the arguments untouched when it adds nothing', () => {
    const init = { method: 'GET' };
    expect(planRequest(URL_A, init, none).args(2)).toEqual([URL_A, init]);
  });

  it('replays buffered bodies, never a stream nor the body of a Request object', () => {
    const replayable = [
      'text',
      new Uint8Array([1]),
      new ArrayBuffer(2),
      new Blob(['b']),
      new URLSearchParams('a=1'),
    ];
    for (const body of replayable) {
      expect(planRequest(URL_A, { method: 'PUT', body }, none).noRetry).toBeUndefined();
    }
    const stream = new ReadableStream({ start: (controller) => controller.close() });
    expect(
      planRequest(URL_A, { method: 'PUT', body: stream, duplex: 'half' } as RequestInit, none).noRetry,
    ).toBe('body_not_replayable');
    const request = new Request(URL_A, { method: 'PUT', body: 'x' });
    expect(planRequest(request, undefined, none).noRetry).toBe('body_not_replayable');
    expect(planRequest(new Request(URL_A, { method: 'DELETE' }), undefined, none).noRetry).toBeUndefined();
  });

  it("reads the method, URL and signal of a Request, init's winning", () => {
    const controller = new AbortController();
    const plan = planRequest(
      new Request(`${URL_A}?q=1`, { method: 'PUT', signal: controller.signal }),
      undefined,
      none,
    );
    expect([plan.method, plan.url.pathname]).toEqual(['PUT', '/a']);
    controller.abort();
    expect(plan.signal?.aborted).toBe(true);
    expect(planRequest(new Request(URL_A), { method: 'post' }, none).method).toBe('POST');
  });

  it('throws for a URL fetch could not use', () => {
    expect(() => planRequest('/relative', undefined, none)).toThrow(TypeError);
  });
});
