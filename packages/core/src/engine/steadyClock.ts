/**
 * The default clock of a limiter whose counters live in this process: the wall clock (epoch ms), except that
 * it never steps back. After a step back (an NTP correction, a restored VM) it runs on from its last reading
 * with the monotonic clock, until the wall clock is ahead again. Counters in process were all written on this
 * clock, so an exhausted window stays exhausted: a stepped-back wall clock would read them as an hour ahead,
 * that is as stale, and open a second window. A reading in the same wall-clock millisecond as the last answers
 * as the last did (the monotonic clock cannot have run a whole millisecond more), so a busy limiter reads
 * the monotonic clock about once per millisecond, not once per request.
 */
export function steadyClock(
  wall: () => number = Date.now,
  monotonic: () => number = () => performance.now(),
): () => number {
  let last = Number.NEGATIVE_INFINITY;
  let lastMono = 0;
  let lastWall = Number.NaN;
  let answer = 0;
  return () => {
    const now = wall();
    if (now === lastWall) return answer;
    lastWall = now;
    const mono = monotonic();
    const floor = last + (mono - lastMono);
    last = Math.max(now, floor);
    lastMono = mono;
    answer = Math.floor(last);
    return answer;
  };
}
