import {
  type DocumentNode,
  type FragmentDefinitionNode,
  GraphQLError,
  Kind,
  NoSchemaIntrospectionCustomRule,
  type OperationDefinitionNode,
  parse,
  specifiedRules,
  type ValidationRule,
  validate,
} from 'graphql';
import { type Bounds, checkDocument, textNesting } from './bounds.js';
import { collectFields, conditionVariables } from './collect.js';
import type { CostModel } from './model.js';
import { refusal, refusalOf } from './refusals.js';
import type { CostRefusal, OperationFacts } from './types.js';
import { type Coercion, compileCoercion } from './variables.js';

/*
 * A document's work, done once: parsed (a text), bounded (bounds.ts), validated with graphql-js's specified
 * rules, its operations found. Kept by query text in a bounded LRU and by DocumentNode identity in a WeakMap
 * (a server that parses and caches documents itself hands the same node again). Refused documents are kept
 * too: a client resending a bad query costs a lookup. Plans are compiled later, per operation (estimator.ts).
 */

export interface DocumentSettings {
  readonly bounds: Bounds;
  readonly maxTokens: number;
  readonly cacheSize: number;
  readonly forbidIntrospection: boolean;
}

/** An operation of a valid document, and the plans compiled for it (filled by the estimator). */
export interface OperationEntry {
  readonly node: OperationDefinitionNode;
  readonly document: DocumentNode;
  readonly fragments: ReadonlyMap<string, FragmentDefinitionNode>;
  readonly facts: OperationFacts;
  /** Variables its @skip / @include read (anywhere in the document): plans are kept per their values. */
  readonly conditionVariables: readonly string[];
  /** Plans (or refusals) by the values of conditionVariables. */
  readonly plans: Map<string, unknown>;
  /** Its variables' coercion (variables.ts). */
  readonly coercion: Coercion;
}

export interface ValidDocument {
  readonly ok: true;
  readonly byName: ReadonlyMap<string, OperationEntry>;
  /** The operation when the document has exactly one. */
  readonly only: OperationEntry | undefined;
}

export type DocumentEntry = ValidDocument | CostRefusal;

interface Cached {
  readonly entry: DocumentEntry;
  /** When it was last moved to the young end (in texts added so far). */
  touched: number;
}

export class DocumentCache {
  readonly #byText = new Map<string, Cached>();
  #added = 0;
  readonly #byNode = new WeakMap<DocumentNode, DocumentEntry>();
  readonly #rules: readonly ValidationRule[];

  constructor(
    readonly model: CostModel,
    readonly settings: DocumentSettings,
  ) {
    this.#rules = settings.forbidIntrospection
      ? [...specifiedRules, NoSchemaIntrospectionCustomRule]
      : specifiedRules;
  }

  /** The entry of a query text, from the cache or made now (the least recently used one leaves when full). */
  ofText(text: string): DocumentEntry {
    const cached = this.#byText.get(text);
    if (cached !== undefined) {
      // Moved to the young end only once it has aged half the cache: a hot text costs a lookup, and is still
      // far from the old end (where texts leave) whenever it is used.
      if (this.#added - cached.touched > this.settings.cacheSize / 2) {
        this.#byText.delete(text);
        this.#byText.set(text, cached);
        cached.touched = this.#added;
      }
      return cached.entry;
    }
    const entry = this.#fromText(text);
    if (this.settings.cacheSize === 0) return entry;
    if (this.#byText.size >= this.settings.cacheSize) {
      const oldest = this.#byText.keys().next();
      if (oldest.done !== true) this.#byText.delete(oldest.value);
    }
    this.#added += 1;
    this.#byText.set(text, { entry, touched: this.#added });
    return entry;
  }

  /** The entry of a parsed document, kept as long as the document lives. */
  ofDocument(document: DocumentNode): DocumentEntry {
    let entry = this.#byNode.get(document);
    if (entry === undefined) {
      entry = this.#fromDocument(document);
      this.#byNode.set(document, entry);
    }
    return entry;
  }

  #fromText(text: string): DocumentEntry {
    const nesting = textNesting(text, this.settings.bounds.maxNesting);
    if (nesting > this.settings.bounds.maxNesting) {
      const message = `The document nests more than ${this.settings.bounds.maxNesting} brackets deep.`;
      return refusal('COST_BOUNDS_EXCEEDED', message);
    }
    let document: DocumentNode;
    try {
      document = parse(text, { maxTokens: this.settings.maxTokens });
    } catch (error) {
      if (error instanceof GraphQLError) return refusalOf('GRAPHQL_PARSE_FAILED', [error]);
      return refusal('GRAPHQL_PARSE_FAILED', `Syntax Error: ${String(error)}`);
    }
    return this.#fromDocument(document);
  }

  #fromDocument(document: DocumentNode): DocumentEntry {
    if (document?.kind !== Kind.DOCUMENT)
      return refusal('BAD_REQUEST', 'The query is not a GraphQL document.');
    const bounded = checkDocument(document, this.settings.bounds);
    if (bounded !== undefined) return bounded;
    const errors = validate(this.model.schema, document, this.#rules);
    if (errors.length > 0) return refusalOf('GRAPHQL_VALIDATION_FAILED', errors);
    return operationsOf(this.model, document);
  }
}

function operationsOf(model: CostModel, document: DocumentNode): ValidDocument {
  const fragments = new Map<string, FragmentDefinitionNode>();
  const operations: OperationDefinitionNode[] = [];
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
    else if (definition.kind === Kind.OPERATION_DEFINITION) operations.push(definition);
  }
  const everySelectionSet = document.definitions.flatMap((definition) =>
    definition.kind === Kind.OPERATION_DEFINITION || definition.kind === Kind.FRAGMENT_DEFINITION
      ? [definition.selectionSet]
      : [],
  );
  const conditions = conditionVariables(everySelectionSet);
  const byName = new Map<string, OperationEntry>();
  for (const node of operations) {
    const entry: OperationEntry = {
      node,
      document,
      fragments,
      facts: factsOf(model, node, fragments),
      conditionVariables: conditions.filter((name) =>
        node.variableDefinitions?.some((v) => v.variable.name.value === name),
      ),
      plans: new Map(),
      coercion: compileCoercion(model.schema, node.variableDefinitions ?? []),
    };
    if (node.name !== undefined) byName.set(node.name.value, entry);
    else if (operations.length === 1) byName.set('', entry);
  }
  return { ok: true, byName, only: operations.length === 1 ? [...byName.values()][0] : undefined };
}

/** Name, type and root fields (fragments resolved; a field a variable may skip counted). */
function factsOf(
  model: CostModel,
  node: OperationDefinitionNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
): OperationFacts {
  const root = model.schema.getRootType(node.operation);
  const keys =
    root === undefined || root === null
      ? []
      : [
          ...collectFields(
            {
              schema: model.schema,
              fragments,
              conditions: () => undefined,
              budget: { spent: 0, limit: Infinity },
            },
            root,
            [node.selectionSet],
          ).keys(),
        ];
  return { name: node.name?.value, type: node.operation, rootFields: keys };
}

/** graphql-js's choice of operation (execute's rules), or its refusal. */
export function chooseOperation(
  document: ValidDocument,
  operationName: string | null | undefined,
): OperationEntry | CostRefusal {
  if (operationName === undefined || operationName === null) {
    if (document.only !== undefined) return document.only;
    return refusal(
      'OPERATION_RESOLUTION_FAILURE',
      'Must provide operation name if query contains multiple operations.',
    );
  }
  const named = document.byName.get(operationName);
  if (named !== undefined && operationName !== '') return named;
  return refusal('OPERATION_RESOLUTION_FAILURE', `Unknown operation named "${operationName}".`);
}
