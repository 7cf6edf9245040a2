import type { LimitParams } from '../algorithms/limits.js';
import { calendarPeriod } from '../algorithms/quota.js';

/** One window of a rule's counter, [start, end) in epoch ms: a fixed window, or a quota's calendar period. */
export interface Window {
  readonly start: number;
  readonly end: number;
}

/** The window that holds `now`, as fixed_window and quota count it (epoch-aligned, or UTC calendar). */
export function windowOf(params: LimitParams, now: number): Window {
  if (params.period !== undefined) return calendarPeriod(params.period, now);
  const start = Math.floor(Math.floor(now) / params.windowMs) * params.windowMs;
  return { start, end: start + params.windowMs };
}

/**
 * The global store's tag of a counter in one window: the key's own tag and the window's start, so that the
 * next window's slice can be taken before it begins without touching this one's count, and so that both
 * global counters of a window (all regions, this region) share a Cluster slot and one call is atomic.
 */
export function globalTag(tag: string, window: Window): string {
  return `${tag}-w${window.start.toString(36)}`;
}

/** Counter name of the slices granted to every region (no rule name has a `.`). */
export function grantedName(rule: string): string {
  return `${rule}.g`;
}

/** Counter name of the slices granted to one region. */
export function regionName(rule: string, region: string): string {
  return `${rule}.r.${region}`;
}
