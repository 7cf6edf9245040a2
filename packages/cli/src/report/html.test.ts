import { describe, expect, test } from 'vitest';
import { denialChart, hourTicks } from './html.js';

const HOUR = 3_600_000;
/** Hours from 2026-03-02 11:00 to 2026-03-03 10:00 UTC: the day of the report that lost its last label. */
const hours = Array.from({ length: 24 }, (_, i) => Date.UTC(2026, 2, 2, 11) + i * HOUR);

/** The x-axis labels of a chart: text, x and anchor. */
function hourLabels(svg: string): { text: string; x: number; anchor: string }[] {
  return [
    ...svg.matchAll(/<text x="([\d.]+)" y="[\d.]+" text-anchor="(\w+)">(\d\d-\d\d \d\d:\d\d)<\/text>/g),
  ].map(([, x, anchor, text]) => ({ text: text ?? '', x: Number(x), anchor: anchor ?? '' }));
}

describe('denials per hour chart', () => {
  test('the last hour is labelled, ending inside the frame', () => {
    const svg = denialChart({ hours, perHour: new Map([['per_ip', hours.map((_, i) => i)]]) });
    const labels = hourLabels(svg);
    const last = labels.at(-1);
    expect(last).toMatchObject({ text: '03-03 10:00', anchor: 'end' });
    const width = Number(/viewBox="0 0 (\d+)/.exec(svg)?.[1]);
    expect(last?.x).toBeLessThanOrEqual(width);
    expect(labels[0]).toMatchObject({ text: '03-02 11:00', anchor: 'middle' });
    expect(labels.length).toBeLessThanOrEqual(9);
  });

  test('ticks: every n-th hour and the last, never two crowded at the end', () => {
    expect(hourTicks(0)).toEqual([]);
    expect(hourTicks(1)).toEqual([0]);
    expect(hourTicks(5)).toEqual([0, 1, 2, 3, 4]);
    expect(hourTicks(24)).toEqual([0, 3, 6, 9, 12, 15, 18, 23]); // 21 would overlap 23, which ends at it
    expect(hourTicks(25)).toEqual([0, 4, 8, 12, 16, 20, 24]);
    expect(hourTicks(22)).toEqual([0, 3, 6, 9, 12, 15, 18, 21]);
  });
});
