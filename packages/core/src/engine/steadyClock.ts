/**
 * The default clock of a limiter whose counters live in this process: the wall clock (epoch ms), except that
 * it never steps back. After a step back (an NTP correction, a restored VM) it runs on from its last reading
 * with the monotonic clock, until the wall clock is ahead again. Counters in process were all written on this
 * clock, so an exhausted window stays exhausted: a stepped-back wall clock would read them as an hour ahead,
 * that is as stale, and open a second window.
 */
export function steadyClock(
  wall: () => number = Date.now,
  monotonic: () => number = () => performance.now(),
): () => number {
  let last = Number.NEGATIVE_INFINITY;
  let lastMono = 0;
  return () => {
    const mono = monotonic();
    const floor = last + (mono - lastMono);
    const now = wall();
    last = Math.max(now, floor);
    lastMono = mono;
    return Math.floor(last);
  };
}
