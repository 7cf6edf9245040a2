import { type DocumentNode, Kind, type OperationDefinitionNode, type SelectionSetNode } from 'graphql';
import type { CostEstimate, OperationFacts } from './cost/index.js';

/*
 * The descriptors rules key and match GraphQL operations by. Rules match a descriptor by equality, so each
 * fact an operator writes a rule about has a descriptor of its own:
 *   graphql_operation       the operation's name (absent for an anonymous operation)
 *   graphql_type            query, mutation or subscription
 *   graphql_fields          the root fields' names, sorted, each once, joined by `,` (`me,search`): to key by
 *   graphql_field.<name>    `true` for each root field (`graphql_field.search`): to match one field whatever
 *                           else the operation selects
 *   graphql_cost            the estimated cost, for a rule's `cost: {descriptor: graphql_cost, max: N}`
 *   graphql_client_name     the `apollographql-client-name` header
 *   graphql_client_version  the `apollographql-client-version` header
 * Root fields are read by their field names, never their aliases: a client cannot rename `search` to escape
 * a rule on it.
 */

/** Descriptor names, in one place for the guide and the tests. */
export const GRAPHQL_DESCRIPTORS = Object.freeze({
  operation: 'graphql_operation',
  type: 'graphql_type',
  fields: 'graphql_fields',
  fieldPrefix: 'graphql_field.',
  cost: 'graphql_cost',
  batch: 'graphql_batch',
  clientName: 'graphql_client_name',
  clientVersion: 'graphql_client_version',
});

/** The Apollo client-awareness headers (lower case, as Node gives them). */
export const CLIENT_NAME_HEADER = 'apollographql-client-name';
export const CLIENT_VERSION_HEADER = 'apollographql-client-version';

/** Longest client header value kept: longer ones are no client's name, and descriptors stay small. */
const MAX_CLIENT_VALUE = 128;

/** Reads one request header by its lower-case name. */
export type HeaderReader = (name: string) => string | undefined;

/** The descriptors of one priced operation. */
export type Descriptors = Readonly<Record<string, string>>;

/** The client name and version the Apollo client headers give, when they look like a name. */
export function clientDescriptors(header: HeaderReader): Record<string, string> {
  return addClient({}, header);
}

/** Adds the client name and version the Apollo client headers give to `found`; answers it. */
function addClient(found: Record<string, string>, header: HeaderReader): Record<string, string> {
  const name = clientValue(header(CLIENT_NAME_HEADER));
  const version = clientValue(header(CLIENT_VERSION_HEADER));
  if (name !== undefined) found[GRAPHQL_DESCRIPTORS.clientName] = name;
  if (version !== undefined) found[GRAPHQL_DESCRIPTORS.clientVersion] = version;
  return found;
}

function clientValue(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' || trimmed.length > MAX_CLIENT_VALUE ? undefined : trimmed;
}

/**
 * The descriptors a request is decided with: the GraphQL ones, the client's, then the app's own (which win;
 * numbers and booleans stringified, anything else left out). A new object: `graphql` may be shared.
 */
export function requestDescriptors(
  graphql: Descriptors,
  header: HeaderReader,
  own?: Readonly<Record<string, unknown>>,
): Record<string, string> {
  // Object.assign, not a spread: V8 gives a spread copy a map no transition leads from, and each property
  // added to it then costs a new map (about a microsecond).
  const found = addClient(Object.assign({}, graphql), header);
  if (typeof own !== 'object' || own === null) return found;
  for (const name of Object.keys(own)) {
    const value = own[name];
    if (typeof value === 'string') found[name] = value;
    else if (typeof value === 'number' || typeof value === 'boolean') found[name] = String(value);
  }
  return found;
}

/**
 * What an operation's descriptors are made of but its cost, kept by its facts (one object per operation of a
 * document the estimator keeps), with the descriptors of the cost seen last: a repeated operation is described
 * by a lookup, not a walk of its document.
 */
interface OperationShape {
  readonly document: CostEstimate['document'];
  readonly fields: readonly string[];
  cost: number;
  descriptors: Descriptors | undefined;
}

const shapes = new WeakMap<OperationFacts, OperationShape>();

/** The descriptors of one operation priced by the estimator (shared between requests: never change them). */
export function operationDescriptors(estimate: CostEstimate): Descriptors {
  const { operation, document, cost } = estimate;
  let shape = shapes.get(operation);
  if (shape === undefined || shape.document !== document) {
    const fields = rootFieldNames(document, operation.name);
    shape = { document, fields, cost: Number.NaN, descriptors: undefined };
    shapes.set(operation, shape);
  }
  if (shape.descriptors === undefined || shape.cost !== cost) {
    shape.descriptors = describe(operation, shape.fields, cost);
    shape.cost = cost;
  }
  return shape.descriptors;
}

function describe(operation: OperationFacts, fields: readonly string[], cost: number): Descriptors {
  const found: Record<string, string> = {
    [GRAPHQL_DESCRIPTORS.type]: operation.type,
    [GRAPHQL_DESCRIPTORS.fields]: fields.join(','),
    [GRAPHQL_DESCRIPTORS.cost]: String(cost),
  };
  if (operation.name !== undefined) found[GRAPHQL_DESCRIPTORS.operation] = operation.name;
  for (const field of fields) found[GRAPHQL_DESCRIPTORS.fieldPrefix + field] = 'true';
  return found;
}

/** Which type a batch decided as one is described as: any mutation makes it one, then a subscription. */
const TYPE_WEIGHT: Readonly<Record<string, number>> = { query: 0, subscription: 1, mutation: 2 };

/**
 * The descriptors of operations decided as one (a batch with `batch: 'whole'`, or any batch inside an
 * adapter): the names and fields of all of them, the heaviest type, the costs summed, and `graphql_batch`
 * their number. One operation alone is described as itself (the same object).
 */
export function unitDescriptors(operations: readonly Descriptors[]): Descriptors {
  const [only] = operations;
  if (operations.length === 1 && only !== undefined) return only;
  const names = new Set<string>();
  const fields = new Set<string>();
  let type = 'query';
  let cost = 0;
  for (const one of operations) {
    const name = one[GRAPHQL_DESCRIPTORS.operation];
    if (name !== undefined) names.add(name);
    for (const field of (one[GRAPHQL_DESCRIPTORS.fields] ?? '').split(',')) if (field) fields.add(field);
    const kind = one[GRAPHQL_DESCRIPTORS.type] ?? 'query';
    if ((TYPE_WEIGHT[kind] ?? 0) > (TYPE_WEIGHT[type] ?? 0)) type = kind;
    cost += Number(one[GRAPHQL_DESCRIPTORS.cost] ?? 0);
  }
  const sorted = [...fields].sort();
  const found: Record<string, string> = {
    [GRAPHQL_DESCRIPTORS.type]: type,
    [GRAPHQL_DESCRIPTORS.fields]: sorted.join(','),
    [GRAPHQL_DESCRIPTORS.cost]: String(cost),
    [GRAPHQL_DESCRIPTORS.batch]: String(operations.length),
  };
  if (names.size > 0) found[GRAPHQL_DESCRIPTORS.operation] = [...names].join(',');
  for (const field of sorted) found[GRAPHQL_DESCRIPTORS.fieldPrefix + field] = 'true';
  return found;
}

/**
 * The names of the fields an operation selects at its root, fragments and inline fragments resolved, sorted,
 * each once; `__typename` left out (it reads nothing). Each fragment is walked once, so a document the
 * estimator accepted is walked in time linear in its size.
 */
export function rootFieldNames(document: DocumentNode, operationName: string | undefined): string[] {
  const operation = document.definitions.find(
    (definition): definition is OperationDefinitionNode =>
      definition.kind === Kind.OPERATION_DEFINITION &&
      (operationName === undefined || definition.name?.value === operationName),
  );
  if (operation === undefined) return [];
  const fragments = new Map<string, SelectionSetNode>();
  for (const definition of document.definitions)
    if (definition.kind === Kind.FRAGMENT_DEFINITION)
      fragments.set(definition.name.value, definition.selectionSet);
  const names = new Set<string>();
  const seen = new Set<string>();
  const pending: SelectionSetNode[] = [operation.selectionSet];
  for (let set = pending.pop(); set !== undefined; set = pending.pop()) {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        if (selection.name.value !== '__typename') names.add(selection.name.value);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) pending.push(selection.selectionSet);
      else if (!seen.has(selection.name.value)) {
        seen.add(selection.name.value);
        const fragment = fragments.get(selection.name.value);
        if (fragment !== undefined) pending.push(fragment);
      }
    }
  }
  return [...names].sort();
}
