import {
  type DocumentNode,
  type FragmentDefinitionNode,
  Kind,
  type SelectionSetNode,
  type TypeNode,
  type ValueNode,
} from 'graphql';
import { type RefusalCode, refusal } from './refusals.js';
import type { CostRefusal } from './types.js';

/*
 * Bounds checked before graphql-js sees a document. Its parser and some validation rules recurse once per level
 * of nesting (the parser overflows the stack between 1,000 and 2,000 levels), so a document must be known to be
 * shallow before it is parsed or validated: the text by a scan of its brackets, the parsed document by an
 * iterative walk that also finds fragment cycles (whose validation rule recurses along the spread chain).
 * Everything here iterates over an explicit stack.
 */

export interface Bounds {
  /** Fields nested in fields, fragments expanded. */
  readonly maxDepth: number;
  /** Field selections in the document (and, when compiled, fields priced with fragments expanded). */
  readonly maxFields: number;
  /** Any nesting: fields, fragments, brackets of values and types. Parser and validation stay far from the stack's end. */
  readonly maxNesting: number;
}

/** The nesting bound that goes with a depth bound. */
export function nestingFor(maxDepth: number): number {
  return 2 * maxDepth + 16;
}

const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
const OPEN_PAREN = 40;
const CLOSE_PAREN = 41;
const QUOTE = 34;
const BACKSLASH = 92;
const HASH = 35;
const NEWLINE = 10;
const RETURN = 13;

/** The deepest bracket nesting of a query text, strings and comments left out; stops once above `limit`. */
export function textNesting(text: string, limit: number): number {
  let depth = 0;
  let deepest = 0;
  let i = 0;
  const length = text.length;
  while (i < length) {
    const code = text.charCodeAt(i);
    if (code === OPEN_BRACE || code === OPEN_BRACKET || code === OPEN_PAREN) {
      depth += 1;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET || code === CLOSE_PAREN) {
      depth -= 1;
    } else if (code === HASH) {
      while (i < length && text.charCodeAt(i) !== NEWLINE && text.charCodeAt(i) !== RETURN) i += 1;
    } else if (code === QUOTE) {
      i = skipString(text, i);
    }
    i += 1;
  }
  return deepest;
}

/** The index of a string's closing quote (block strings included); the text's end when unterminated. */
function skipString(text: string, start: number): number {
  if (text.startsWith('"""', start)) {
    let i = start + 3;
    while (i < text.length) {
      if (text.charCodeAt(i) === BACKSLASH && text.startsWith('\\"""', i)) i += 4;
      else if (text.startsWith('"""', i)) return i + 2;
      else i += 1;
    }
    return text.length;
  }
  let i = start + 1;
  while (i < text.length) {
    const code = text.charCodeAt(i);
    if (code === BACKSLASH) i += 2;
    else if (code === QUOTE || code === NEWLINE || code === RETURN) return i;
    else i += 1;
  }
  return text.length;
}

interface Shape {
  /** Deepest field nesting, fragments expanded. */
  fields: number;
  /** Deepest nesting of anything. */
  nesting: number;
}

/**
 * Checks a parsed document before validation: no fragment cycle, no deeper than the bounds, no more field
 * selections than `maxFields`. Undefined when it passes.
 */
export function checkDocument(document: DocumentNode, bounds: Bounds): CostRefusal | undefined {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION && !fragments.has(definition.name.value)) {
      fragments.set(definition.name.value, definition);
    }
  }
  const order = fragmentOrder(fragments);
  if (!Array.isArray(order)) return order;
  const shapes = new Map<string, Shape>();
  const count = { fields: 0 };
  for (const name of order) {
    const fragment = fragments.get(name)!;
    shapes.set(name, shapeOf(fragment.selectionSet, shapes, count));
  }
  let deepest: Shape = { fields: 0, nesting: 0 };
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
    const shape = shapeOf(definition.selectionSet, shapes, count);
    for (const variable of definition.variableDefinitions ?? []) {
      shape.nesting = Math.max(
        shape.nesting,
        typeNesting(variable.type),
        valueNesting(variable.defaultValue),
      );
    }
    deepest = {
      fields: Math.max(deepest.fields, shape.fields),
      nesting: Math.max(deepest.nesting, shape.nesting),
    };
  }
  for (const shape of shapes.values()) deepest.nesting = Math.max(deepest.nesting, shape.nesting);
  return exceeded(deepest, count.fields, bounds);
}

function exceeded(shape: Shape, fields: number, bounds: Bounds): CostRefusal | undefined {
  const code: RefusalCode = 'COST_BOUNDS_EXCEEDED';
  if (shape.fields > bounds.maxDepth) {
    return refusal(code, `The operation nests fields ${shape.fields} deep; the limit is ${bounds.maxDepth}.`);
  }
  if (shape.nesting > bounds.maxNesting) {
    return refusal(
      code,
      `The document nests ${shape.nesting} levels deep; the limit is ${bounds.maxNesting}.`,
    );
  }
  if (fields > bounds.maxFields) {
    return refusal(code, `The document selects ${fields} fields; the limit is ${bounds.maxFields}.`);
  }
  return undefined;
}

/** Fragments in dependency order (a fragment after those it spreads), or the refusal of a cycle. */
function fragmentOrder(fragments: ReadonlyMap<string, FragmentDefinitionNode>): string[] | CostRefusal {
  const spreads = new Map<string, string[]>();
  for (const [name, fragment] of fragments) spreads.set(name, spreadNames(fragment.selectionSet));
  const state = new Map<string, 'open' | 'done'>();
  const order: string[] = [];
  for (const start of fragments.keys()) {
    if (state.has(start)) continue;
    const stack: { name: string; next: number }[] = [{ name: start, next: 0 }];
    state.set(start, 'open');
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const names = spreads.get(top.name)!;
      if (top.next === names.length) {
        stack.pop();
        state.set(top.name, 'done');
        order.push(top.name);
        continue;
      }
      const name = names[top.next++]!;
      if (!fragments.has(name) || state.get(name) === 'done') continue;
      if (state.get(name) === 'open') return cycle(name, stack, fragments);
      state.set(name, 'open');
      stack.push({ name, next: 0 });
    }
  }
  return order;
}

/** graphql-js's wording (NoFragmentCyclesRule), found without recursion. */
function cycle(
  name: string,
  stack: readonly { name: string }[],
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
): CostRefusal {
  const from = stack.findIndex((entry) => entry.name === name);
  const via = stack.slice(from + 1).map((entry) => `"${entry.name}"`);
  const message = `Cannot spread fragment "${name}" within itself${via.length > 0 ? ` via ${via.join(', ')}` : ''}.`;
  return refusal('GRAPHQL_VALIDATION_FAILED', message, fragments.get(name));
}

/** The names of the fragments a selection set spreads, at any depth. */
function spreadNames(selectionSet: SelectionSetNode): string[] {
  const names: string[] = [];
  const stack: SelectionSetNode[] = [selectionSet];
  while (stack.length > 0) {
    for (const selection of stack.pop()!.selections) {
      if (selection.kind === Kind.FRAGMENT_SPREAD) names.push(selection.name.value);
      else if (selection.selectionSet !== undefined) stack.push(selection.selectionSet);
    }
  }
  return names;
}

/** A selection set's shape, spreads read from the shapes of the fragments before it. */
function shapeOf(
  selectionSet: SelectionSetNode,
  fragments: ReadonlyMap<string, Shape>,
  count: { fields: number },
): Shape {
  const shape: Shape = { fields: 0, nesting: 0 };
  const stack: { set: SelectionSetNode; fields: number; nesting: number }[] = [
    { set: selectionSet, fields: 0, nesting: 1 },
  ];
  while (stack.length > 0) {
    const { set, fields, nesting } = stack.pop()!;
    for (const selection of set.selections) {
      const inner = nesting + 1;
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const spread = fragments.get(selection.name.value);
        if (spread === undefined) continue;
        shape.fields = Math.max(shape.fields, fields + spread.fields);
        shape.nesting = Math.max(shape.nesting, inner + spread.nesting);
        continue;
      }
      let values = 0;
      for (const argument of selection.kind === Kind.FIELD ? (selection.arguments ?? []) : []) {
        values = Math.max(values, valueNesting(argument.value));
      }
      for (const directive of selection.directives ?? []) {
        for (const argument of directive.arguments ?? [])
          values = Math.max(values, valueNesting(argument.value));
      }
      const depth = selection.kind === Kind.FIELD ? fields + 1 : fields;
      if (selection.kind === Kind.FIELD) count.fields += 1;
      shape.fields = Math.max(shape.fields, depth);
      shape.nesting = Math.max(shape.nesting, inner + values);
      if (selection.selectionSet !== undefined)
        stack.push({ set: selection.selectionSet, fields: depth, nesting: inner });
    }
  }
  return shape;
}

/** The nesting of a value literal (lists and input objects). */
export function valueNesting(value: ValueNode | undefined): number {
  if (value === undefined) return 0;
  let deepest = 0;
  const stack: { node: ValueNode; depth: number }[] = [{ node: value, depth: 1 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    deepest = Math.max(deepest, depth);
    if (node.kind === Kind.LIST) for (const item of node.values) stack.push({ node: item, depth: depth + 1 });
    else if (node.kind === Kind.OBJECT)
      for (const field of node.fields) stack.push({ node: field.value, depth: depth + 1 });
  }
  return deepest;
}

function typeNesting(type: TypeNode): number {
  let depth = 1;
  let current = type;
  while (current.kind !== Kind.NAMED_TYPE) {
    depth += 1;
    current = current.type;
  }
  return depth;
}

/** The nesting of a JSON value (request variables): arrays and objects. Stops once above `limit`. */
export function jsonNesting(value: unknown, limit: number): number {
  let deepest = 0;
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 1 }];
  while (stack.length > 0) {
    const { value: current, depth } = stack.pop()!;
    if (typeof current !== 'object' || current === null) continue;
    deepest = Math.max(deepest, depth);
    if (deepest > limit) return deepest;
    const items = Array.isArray(current) ? current : Object.values(current);
    for (const item of items)
      if (typeof item === 'object' && item !== null) stack.push({ value: item, depth: depth + 1 });
  }
  return deepest;
}
