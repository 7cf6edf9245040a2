import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { challengeOf, solveChallenge } from './challenge.js';
import { resolveOptions } from './options.js';

const header = (value: string) => new Headers({ 'Sluice-Challenge': value });
const TOKEN = 'c1.YXBp.hash.9.1764590460000.nonce.sig';

describe('challenges', () => {
  it('reads a challenge within maxDifficulty, and nothing else', () => {
    const good = `"${TOKEN}";alg=sha256-leading-zero-bits;difficulty=9;expires=1764590460`;
    expect(challengeOf(header(good), 20)).toEqual({ token: TOKEN, difficulty: 9 });
    expect(challengeOf(header(good), 8)).toBeUndefined();
    expect(challengeOf(header(good.replace('sha256-leading-zero-bits', 'argon2')), 20)).toBeUndefined();
    expect(challengeOf(header(`${TOKEN};alg=sha256-leading-zero-bits;difficulty=9`), 20)).toBeUndefined();
    expect(challengeOf(header('"x";alg=sha256-leading-zero-bits;difficulty=0'), 20)).toBeUndefined();
    expect(challengeOf(new Headers(), 20)).toBeUndefined();
  });

  it('solves: the hash of the solution starts with the zero bits asked for', async () => {
    const solution = await solveChallenge({ token: TOKEN, difficulty: 10 });
    expect(solution.startsWith(`${TOKEN}:`)).toBe(true);
    const digest = createHash('sha256').update(solution).digest();
    expect(digest[0]).toBe(0);
    expect(digest[1]! >> 6).toBe(0);
  });

  it('checks the option: a did-you-mean, a bounded difficulty, false turns it off', () => {
    expect(() => resolveOptions({ challenge: { maxdifficulty: 10 } as never })).toThrow(
      'unknown option "maxdifficulty" (did you mean "maxDifficulty"?)',
    );
    expect(() => resolveOptions({ challenge: { maxDifficulty: 40 } })).toThrow('from 0 to 32');
    expect(resolveOptions({ challenge: false }).maxDifficulty).toBe(0);
    expect(resolveOptions({}).maxDifficulty).toBe(20);
  });
});
