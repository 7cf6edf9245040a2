/**
 * A script built from shared pieces (the prelude, an algorithm's fragment and the fragments it starts with)
 * keeps only the definitions something uses. Each `local function` and each local a script defines is made
 * anew on every call (a closure, a table): a function the call never runs still costs every call.
 */

/** A top-level definition: the names it defines and its lines [from, to]. */
interface Definition {
  readonly names: readonly string[];
  readonly from: number;
  readonly to: number;
}

const FUNCTION = /^local function ([A-Za-z_]\w*)\(/;
/** A one-line local (`local a, b = {}, 0`); a line that opens a bracket or a function it does not close is not one. */
const ONE_LINE_LOCAL = /^local ([A-Za-z_]\w*(?:, [A-Za-z_]\w*)*) = (.*)$/;

const balanced = (text: string): boolean =>
  !/\bfunction\b/.test(text) && (text.match(/[({[]/g) ?? []).length === (text.match(/[)}\]]/g) ?? []).length;

/**
 * The definitions at the top level (column 0) of `lines`: a `local function` runs to the first `end` at
 * column 0 after it, as the fragments are written.
 */
function definitionsOf(lines: readonly string[]): Definition[] {
  const found: Definition[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fn = FUNCTION.exec(line);
    if (fn !== null) {
      const to = lines.indexOf('end', i + 1);
      if (to < 0) throw new Error(`no end for local function ${fn[1]}`);
      found.push({ names: [fn[1]!], from: i, to });
      i = to;
      continue;
    }
    const local = ONE_LINE_LOCAL.exec(line);
    if (local !== null && balanced(local[2]!)) found.push({ names: local[1]!.split(', '), from: i, to: i });
  }
  return found;
}

/** Whether `name` appears as a name (not a field: `x.name`) in `text`. */
const mentions = (text: string, name: string): boolean => new RegExp(`(?<![\\w.])${name}\\b`).test(text);

/**
 * `pieces` without the top-level definitions that neither `context` (the script's main part) nor another kept
 * definition mentions, repeated until none goes. Whole-line comments go first, so that a comment naming a
 * function does not keep it.
 */
export function withoutUnused(pieces: string, context: string): string {
  const lines = withoutComments(pieces);
  const uses = withoutComments(context).join('\n');
  const definitions = definitionsOf(lines);
  const kept = new Set(definitions);
  const textOf = (d: Definition) => lines.slice(d.from, d.to + 1).join('\n');
  const inside = new Set(definitions.flatMap((d) => range(d.from, d.to)));
  const loose = lines.filter((_, i) => !inside.has(i)).join('\n');
  for (let changed = true; changed; ) {
    changed = false;
    for (const definition of kept) {
      const others = [uses, loose, ...[...kept].filter((d) => d !== definition).map(textOf)].join('\n');
      if (definition.names.some((name) => mentions(others, name))) continue;
      kept.delete(definition);
      changed = true;
    }
  }
  const dropped = new Set(definitions.filter((d) => !kept.has(d)).flatMap((d) => range(d.from, d.to)));
  return lines.filter((_, i) => !dropped.has(i)).join('\n');
}

const withoutComments = (lua: string): string[] =>
  lua.split('\n').filter((line) => !line.trimStart().startsWith('--'));

const range = (from: number, to: number): number[] =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i);
