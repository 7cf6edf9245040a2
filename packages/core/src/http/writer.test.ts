import { describe, expect, it } from 'vitest';
import type { DeniedResponse } from '../fields/responses.js';
import type { Decision } from '../observe/contract.js';
import type { Verdict } from './flow.js';
import { rateLimitInfo } from './info.js';
import { type VerdictIO, verdictWriter } from './writer.js';

/** A response as the writer sees it; every call the writer makes is logged. */
interface Exchange {
  sent: boolean;
  log: string[];
}

const decision = { allowed: true, leases: [], delayMs: 0, results: [] } as unknown as Decision;
const denied: DeniedResponse = {
  status: 429,
  headers: { 'Retry-After': '60' },
  body: { error: 'rate_limited', rule: 'per_ip', retryAfter: 60 },
} as unknown as DeniedResponse;

/** Logs `entry` and returns `value`. */
function logged<T>(x: Exchange, entry: string, value: T): T {
  x.log.push(entry);
  return value;
}

function io(onDenied?: VerdictIO<Exchange, Exchange, string, string>['onDenied'], stillThere = true) {
  const methods: VerdictIO<Exchange, Exchange, string, string> = {
    proceed: (x, _b, next) => logged(x, `proceed ${next}`, 'proceeded'),
    stop: (x) => logged(x, 'stop', 'stopped'),
    later: (x, _b, _next, pending) => {
      x.log.push('later');
      void pending.then((value) => x.log.push(`settled ${String(value)}`));
      return 'later';
    },
    setInfo: (x, _b, info) => void x.log.push(`info ${info.remaining}`),
    sent: (x) => x.sent,
    setHeaders: (x, _b, headers) => void x.log.push(`headers ${Object.keys(headers).join(',')}`),
    whenDone: (x, _b, next) => logged(x, 'report on end', `${next}+report`),
    wait: (x, _b, ms) => logged(x, `wait ${ms}`, Promise.resolve(stillThere)),
    left: (x) => logged(x, 'left', 'gone'),
    onDenied,
    answered: (x, _b, own, threw) => logged(x, `answered ${String(own)} ${threw}`, own),
    sendDenied: (x, _b, body) => logged(x, `default ${body.status}`, 'default'),
  };
  return methods;
}

/** An allowed verdict; `listens`: it asks to hear how the response ends (leases, refunds, adaptive rules). */
function allow(overrides: Partial<Decision> = {}, listens = false): Verdict {
  const settled = { ...decision, ...overrides } as Decision;
  return {
    action: 'allow',
    decision: settled,
    headers: { RateLimit: 'r=1' },
    info: { ...rateLimitInfo(settled, undefined), remaining: 1 },
    delayMs: settled.delayMs,
    onResponse: listens ? () => {} : undefined,
    release: () => Promise.resolve(),
    cancel: () => Promise.resolve(),
  };
}

const deny: Verdict = {
  action: 'deny',
  denied,
  info: { ...rateLimitInfo(decision, undefined), remaining: 0 },
};
const flush = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('verdictWriter', () => {
  it('passes a skipped request on untouched', () => {
    const exchange: Exchange = { sent: false, log: [] };
    expect(verdictWriter(io(), () => {})(exchange, exchange, 'next', { action: 'skip' })).toBe('proceeded');
    expect(exchange.log).toEqual(['proceed next']);
  });

  it('sets the info and headers of an allowed request, and hears how it ends only when the verdict asks', () => {
    const exchange: Exchange = { sent: false, log: [] };
    const act = verdictWriter(io(), () => {});
    act(exchange, exchange, 'next', allow({}, true));
    expect(exchange.log).toEqual(['info 1', 'headers RateLimit', 'report on end', 'proceed next+report']);
    const quiet: Exchange = { sent: false, log: [] };
    act(quiet, quiet, 'next', allow());
    expect(quiet.log).toEqual(['info 1', 'headers RateLimit', 'proceed next']);
  });

  it('after a delay, listens only once the request is served; a client that left is not heard', async () => {
    const here: Exchange = { sent: false, log: [] };
    verdictWriter(io(), () => {})(here, here, 'next', allow({ delayMs: 5 }, true));
    await flush();
    expect(here.log.slice(2, 5)).toEqual(['wait 5', 'later', 'report on end']);
    const gone: Exchange = { sent: false, log: [] };
    verdictWriter(io(undefined, false), () => {})(gone, gone, 'next', allow({ delayMs: 5 }, true));
    await flush();
    expect(gone.log).not.toContain('report on end');
  });

  it('leaves a response already sent alone: no headers, no denial', () => {
    const exchange: Exchange = { sent: true, log: [] };
    const act = verdictWriter(io(), () => {});
    act(exchange, exchange, 'next', allow());
    expect(act(exchange, exchange, 'next', deny)).toBe('stopped');
    expect(exchange.log).toEqual(['info 1', 'proceed next', 'info 0', 'stop']);
  });

  it('waits a delay, then goes on, or ends when the client left', async () => {
    const here: Exchange = { sent: false, log: [] };
    verdictWriter(io(), () => {})(here, here, 'next', allow({ delayMs: 5 }));
    await flush();
    expect(here.log).toEqual([
      'info 1',
      'headers RateLimit',
      'wait 5',
      'later',
      'proceed next',
      'settled proceeded',
    ]);
    const gone: Exchange = { sent: false, log: [] };
    verdictWriter(io(undefined, false), () => {})(gone, gone, 'next', allow({ delayMs: 5 }));
    await flush();
    expect(gone.log.slice(-2)).toEqual(['left', 'settled gone']);
  });

  it("sends the default denial, or the app's answer, and reports an onDenied that throws", async () => {
    const plain: Exchange = { sent: false, log: [] };
    verdictWriter(io(), () => {})(plain, plain, 'next', deny);
    await flush();
    // Without an onDenied nothing is awaited: the default is sent before the writer returns.
    expect(plain.log).toEqual(['info 0', 'default 429', 'later', 'settled default']);

    const own: Exchange = { sent: false, log: [] };
    verdictWriter(
      io(() => 'mine'),
      () => {},
    )(own, own, 'next', deny);
    await flush();
    expect(own.log).toEqual(['info 0', 'later', 'answered mine false', 'settled mine']);

    const reported: string[] = [];
    const broken: Exchange = { sent: false, log: [] };
    const throwing = () => {
      throw new Error('onDenied bug');
    };
    verdictWriter(io(throwing), (error, stage) => reported.push(`${stage}: ${(error as Error).message}`))(
      broken,
      broken,
      'next',
      deny,
    );
    await flush();
    expect(broken.log).toEqual([
      'info 0',
      'answered undefined true',
      'default 429',
      'later',
      'settled default',
    ]);
    expect(reported).toEqual(['on_denied: onDenied bug']);
  });

  it('carries out a pending verdict once it settles, handing the work over through later', async () => {
    const exchange: Exchange = { sent: false, log: [] };
    const act = verdictWriter(io(), () => {});
    expect(act(exchange, exchange, 'next', Promise.resolve(allow()))).toBe('later');
    expect(exchange.log).toEqual(['later']);
    await flush();
    expect(exchange.log).toEqual([
      'later',
      'info 1',
      'headers RateLimit',
      'proceed next',
      'settled proceeded',
    ]);
  });
});
