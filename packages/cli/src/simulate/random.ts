/** mulberry32: a small seeded generator, so a simulation is the same run after run. Uniform in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The wait to the next arrival of a Poisson process of `rate` per second, in ms. */
export function exponentialGapMs(random: () => number, rate: number): number {
  return (-Math.log(1 - random()) / rate) * 1000;
}
