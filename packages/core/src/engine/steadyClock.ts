/**
 * The default clock of every limiter, whatever its store: the wall clock (epoch ms), except that it never
 * steps back. After a step back (an NTP correction, a restored VM) it runs on from its last reading with the
 * monotonic clock, until the wall clock is ahead again. The counters this process reads were written on this
 * clock (in process, or in Redis or PostgreSQL on the `app` clock), so an exhausted window stays exhausted: a
 * stepped-back wall clock would read them as an hour ahead, that is as stale, and open a second window. The
 * price on a shared store: a gateway whose clock was ahead keeps its time until its wall clock catches up, as
 * it did before the step; gateways whose clocks disagree share the store's clock instead (RedisStore
 * `clock: 'redis'`, PostgresStore's default). A reading in the same wall-clock millisecond as the last answers
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
