import { mergeBoards } from '@sluice/core';
import { describe, expect, it } from 'vitest';
import { renderFrame } from './frame.js';
import { revealWith } from './reveal.js';
import { scriptCallsOf } from './source.js';
import { type FleetView, shardView } from './view.js';

describe('shard shares', () => {
  it('reads the script calls of INFO commandstats, EVALSHA and EVAL and their read-only forms', () => {
    const info = [
      '# Commandstats',
      'cmdstat_evalsha:calls=120,usec=900,usec_per_call=7.50,rejected_calls=0,failed_calls=0',
      'cmdstat_eval:calls=3,usec=40,usec_per_call=13.33,rejected_calls=0,failed_calls=0',
      'cmdstat_evalsha_ro:calls=7,usec=10,usec_per_call=1.43,rejected_calls=0,failed_calls=0',
      'cmdstat_get:calls=1000,usec=100,usec_per_call=0.10,rejected_calls=0,failed_calls=0',
    ].join('\r\n');
    expect(scriptCallsOf(info)).toBe(130);
  });

  it('gives each master its share since it started, then since the last read, and the imbalance', () => {
    const first = [
      { node: 'a:1', calls: 600 },
      { node: 'b:1', calls: 300 },
      { node: 'c:1', calls: 100 },
    ];
    const start = shardView(first, undefined);
    expect(start.over).toBe('start');
    expect(start.nodes.map((n) => n.share)).toEqual([0.6, 0.3, 0.1]);
    expect(start.imbalance).toBeCloseTo(1.8);
    const later = shardView(
      first.map((n) => ({ ...n, calls: n.calls + 100 })),
      first,
    );
    expect(later.over).toBe('interval');
    expect(later.imbalance).toBeCloseTo(1);
    // No call at all: even, not a division by zero.
    expect(shardView(first, first)).toMatchObject({ imbalance: 1 });
  });
});

describe('reveal', () => {
  it('asks the app once per shown tag; a throwing lookup or an unknown tag leaves the tag as is', async () => {
    const board = mergeBoards([]);
    const asked: string[] = [];
    const reveal = revealWith((tag) => {
      asked.push(tag);
      if (tag === 'bad') throw new Error('lookup down');
      return tag === 'known' ? 'acct-1' : undefined;
    });
    const withKeys = {
      ...board,
      rules: [
        {
          rule: 'r',
          keys: { keys: [{ tag: 'known' }, { tag: 'bad' }, { tag: 'other' }] },
          denials: { keys: [{ tag: 'known' }] },
        },
      ],
    } as unknown as typeof board;
    expect(await reveal.names(withKeys)).toEqual({ known: 'acct-1' });
    expect(await reveal.names(withKeys)).toEqual({ known: 'acct-1' });
    expect(asked.sort()).toEqual(['bad', 'known', 'other']);
  });
});

describe('a frame', () => {
  it('says how to publish when no gateway has', () => {
    const view: FleetView = {
      at: Date.UTC(2026, 0, 1),
      source: 'redis://127.0.0.1:1',
      board: mergeBoards([]),
      unreadable: 0,
      shards: undefined,
      revealed: {},
    };
    expect(renderFrame(view)).toEqual([
      'sluice top  redis://127.0.0.1:1  2026-01-01T00:00:00Z  0 gateway(s)',
      'no gateway has published a board: start them with watch: {publish: true} (docs/guide/watching.md)',
    ]);
  });
});
