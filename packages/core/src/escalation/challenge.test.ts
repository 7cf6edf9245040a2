import { describe, expect, it } from 'vitest';
import {
  difficultyFor,
  issueChallenge,
  leadingZeroBits,
  solveChallenge,
  verifySolution,
  workHash,
} from './challenge.js';

const SECRET = 'a-test-secret-of-enough-length';
const NOW = Date.UTC(2026, 11, 1, 12, 0, 0);

describe('proof-of-work challenges', () => {
  const challenge = issueChallenge(SECRET, 'api', 'key-hash-1', 8, NOW, 30_000);
  const solution = solveChallenge(challenge);

  it('accept a solution of the key and rule before it expires', () => {
    expect(challenge).toMatchObject({
      algorithm: 'sha256-leading-zero-bits',
      difficulty: 8,
      expiresAt: NOW + 30_000,
    });
    expect(verifySolution(SECRET, solution, 'api', 'key-hash-1', NOW + 1000)).toBe('ok');
  });

  it('refuse an expired, forged, other key, other rule, unsolved or malformed solution', () => {
    expect(verifySolution(SECRET, solution, 'api', 'key-hash-1', NOW + 30_001)).toBe('expired');
    expect(verifySolution('another-secret-entirely', solution, 'api', 'key-hash-1', NOW)).toBe('forged');
    const raised = solution.replace('.8.', '.1.');
    expect(verifySolution(SECRET, raised, 'api', 'key-hash-1', NOW)).toBe('forged');
    expect(verifySolution(SECRET, solution, 'api', 'key-hash-2', NOW)).toBe('wrong_key');
    expect(verifySolution(SECRET, solution, 'login', 'key-hash-1', NOW)).toBe('wrong_rule');
    let counter = 0;
    while (leadingZeroBits(workHash(challenge.token, counter)) >= 8) counter++;
    expect(verifySolution(SECRET, `${challenge.token}:${counter}`, 'api', 'key-hash-1', NOW)).toBe(
      'unsolved',
    );
    expect(verifySolution(SECRET, 'nonsense', 'api', 'key-hash-1', NOW)).toBe('malformed');
    expect(verifySolution(SECRET, `${challenge.token}:-1`, 'api', 'key-hash-1', NOW)).toBe('malformed');
  });

  it('count leading zero bits and grow the difficulty with violations', () => {
    expect(leadingZeroBits(Uint8Array.from([0, 0x0f, 0xff]))).toBe(12);
    expect(leadingZeroBits(Uint8Array.from([0x80]))).toBe(0);
    expect([2, 3, 4, 9].map((violations) => difficultyFor(16, 2, violations))).toEqual([16, 17, 18, 23]);
    expect(difficultyFor(30, 1, 10)).toBe(32);
  });
});
