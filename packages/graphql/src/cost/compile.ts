import {
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLSchema,
  isAbstractType,
  isCompositeType,
  type OperationDefinitionNode,
  SchemaMetaFieldDef,
  type SelectionSetNode,
  TypeMetaFieldDef,
  TypeNameMetaFieldDef,
} from 'graphql';
import { BudgetExceeded, type Collection, type Conditions, collectFields } from './collect.js';
import { type Dyn, maxOf, sumOf } from './dyn.js';
import { argumentsCost } from './inputs.js';
import type { CostModel } from './model.js';
import { type FieldPlan, fixedOfField, type SelectionPlan, type TypePlan } from './plan.js';
import { refusal } from './refusals.js';
import { listSizeOf } from './sizes.js';
import type { CostRefusal } from './types.js';

/*
 * Compiling an operation into a plan (plan.ts). Recursion follows the operation's field depth, which
 * bounds.ts has bounded before; the work (selections visited) and the fields priced, fragments expanded, are
 * bounded here, and a plan beyond them is refused. Selections met twice with the same fields (the same
 * fragment under several parents, an interface's implementations) are compiled once.
 */

export interface CompileSettings {
  readonly defaultListSize: number;
  readonly introspection: 'free' | 'priced' | 'forbidden';
  /** Fields priced, fragments expanded. */
  readonly maxFields: number;
}

/** Carries a refusal out of the recursion; never leaves compileOperation. */
class Refused extends Error {
  constructor(readonly refusal: CostRefusal) {
    super(refusal.errors[0]?.message);
  }
}

/** The size a parent's @listSize(sizedFields:) gives its fields of those names. */
interface Sizing {
  readonly fields: readonly string[];
  readonly size: Dyn;
}

/** A selection compiled: by the fields merged, the type they return, and the sizing their parent gave. */
interface Compiled {
  readonly nodes: readonly FieldNode[];
  readonly named: GraphQLCompositeType;
  readonly sizing: Sizing | undefined;
  readonly plan: SelectionPlan;
}

interface Compiler extends Collection {
  readonly model: CostModel;
  readonly settings: CompileSettings;
  /** Compiled selections by their first field node. */
  readonly memo: Map<FieldNode, Compiled[]>;
}

/** The plan of an operation for one set of @skip/@include values, or why it cannot be priced. */
export function compileOperation(
  model: CostModel,
  operation: OperationDefinitionNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  conditions: Conditions,
  settings: CompileSettings,
): TypePlan | CostRefusal {
  const root = model.schema.getRootType(operation.operation);
  if (root === undefined || root === null) {
    const message = `Schema is not configured to execute ${operation.operation} operation.`;
    return refusal('GRAPHQL_VALIDATION_FAILED', message, operation);
  }
  const compiler: Compiler = {
    schema: model.schema,
    fragments,
    conditions,
    budget: { spent: 0, limit: 20 * settings.maxFields + 1000 },
    model,
    settings,
    memo: new Map(),
  };
  try {
    return compileType(compiler, root, [operation.selectionSet], undefined);
  } catch (error) {
    if (error instanceof Refused) return error.refusal;
    if (error instanceof BudgetExceeded)
      return tooLarge(`selections to compile exceed ${compiler.budget.limit}`);
    throw error;
  }
}

function tooLarge(what: string): CostRefusal {
  return refusal('COST_BOUNDS_EXCEEDED', `The operation is too large to price: ${what}.`);
}

function compileType(
  compiler: Compiler,
  object: GraphQLObjectType,
  selectionSets: readonly SelectionSetNode[],
  sizing: Sizing | undefined,
): TypePlan {
  const fields: FieldPlan[] = [];
  const typename: string[] = [];
  let expanded = 0;
  for (const [key, nodes] of collectFields(compiler, object, selectionSets)) {
    const name = nodes[0]!.name.value;
    if (name === '__typename') typename.push(key);
    const def = fieldDefinition(compiler.schema, object, name);
    if (def === undefined || (name.startsWith('__') && compiler.settings.introspection !== 'priced'))
      continue;
    const plan = compileField(compiler, object, def, key, nodes, sizing);
    fields.push(plan);
    expanded += plan.expanded;
    if (expanded > compiler.settings.maxFields) {
      throw new Refused(tooLarge(`more than ${compiler.settings.maxFields} fields, fragments expanded`));
    }
  }
  const weight = compiler.model.typeWeight(object);
  let fixedField = 0;
  let fixedType = weight;
  for (const field of fields) {
    fixedField += field.fixedField;
    fixedType += field.fixedType;
  }
  return { object, weight, fields, typename, fixedField, fixedType, expanded };
}

/** graphql-js's getFieldDef: the meta fields, then the type's own. */
function fieldDefinition(
  schema: GraphQLSchema,
  object: GraphQLObjectType,
  name: string,
): GraphQLField<unknown, unknown> | undefined {
  if (name === TypeNameMetaFieldDef.name) return TypeNameMetaFieldDef;
  if (object === schema.getQueryType()) {
    if (name === SchemaMetaFieldDef.name) return SchemaMetaFieldDef;
    if (name === TypeMetaFieldDef.name) return TypeMetaFieldDef;
  }
  return object.getFields()[name];
}

function compileField(
  compiler: Compiler,
  object: GraphQLObjectType,
  def: GraphQLField<unknown, unknown>,
  key: string,
  nodes: readonly FieldNode[],
  sizing: Sizing | undefined,
): FieldPlan {
  const model = compiler.model.field(def);
  const node = nodes[0]!;
  const args = argumentsCost(compiler.model, model.args, node.arguments);
  const directives = directivesCost(compiler, nodes);
  const weight = args === 0 && directives === 0 ? model.weight : sumOf([model.weight, args, directives]);
  const { defaultListSize } = compiler.settings;
  const sizedHere = model.listSize !== undefined && model.listSize.sizedFields.length > 0;
  let size: Dyn = 1;
  if (model.listDepth > 0) {
    if (sizing?.fields.includes(def.name)) size = sizing.size;
    else if (sizedHere) size = defaultListSize;
    else size = sized(listSizeOf(model, object, node, defaultListSize));
  }
  let inner: Sizing | undefined;
  if (sizedHere) {
    inner = {
      fields: model.listSize!.sizedFields,
      size: sized(listSizeOf(model, object, node, defaultListSize)),
    };
  }
  const named = model.named;
  const child = isCompositeType(named) ? compileSelection(compiler, named, nodes, inner) : undefined;
  const leafWeight = child === undefined ? compiler.model.typeWeight(named) : 0;
  const fixed = fixedOfField(weight, size, model.listDepth, leafWeight, child);
  return {
    key,
    weight,
    size,
    listDepth: model.listDepth,
    leafWeight,
    child,
    fixedField: fixed.fixedField,
    fixedType: fixed.fixedType,
    expanded: 1 + (child?.expanded ?? 0),
  };
}

function sized(size: Dyn | CostRefusal): Dyn {
  if (typeof size === 'object') throw new Refused(size);
  return size;
}

/** The directives on a field (spec §5.3.2.2): their arguments' weights; the heaviest of merged field nodes. */
function directivesCost(compiler: Compiler, nodes: readonly FieldNode[]): Dyn {
  if (nodes.length === 1) return nodeDirectivesCost(compiler, nodes[0]!);
  return maxOf(nodes.map((node) => nodeDirectivesCost(compiler, node)));
}

function nodeDirectivesCost(compiler: Compiler, node: FieldNode): Dyn {
  const directives = node.directives;
  if (directives === undefined || directives.length === 0) return 0;
  const parts: Dyn[] = [];
  for (const directive of directives) {
    const weights = compiler.model.directiveArgs(directive.name.value);
    parts.push(argumentsCost(compiler.model, weights, directive.arguments));
  }
  return sumOf(parts);
}

function compileSelection(
  compiler: Compiler,
  named: GraphQLCompositeType,
  nodes: readonly FieldNode[],
  sizing: Sizing | undefined,
): SelectionPlan {
  const known = compiler.memo.get(nodes[0]!);
  const found = known?.find(
    (entry) => entry.named === named && entry.sizing === sizing && same(entry.nodes, nodes),
  );
  if (found !== undefined) return found.plan;
  const selectionSets: SelectionSetNode[] = [];
  for (const node of nodes) if (node.selectionSet !== undefined) selectionSets.push(node.selectionSet);
  const objects = isAbstractType(named) ? compiler.schema.getPossibleTypes(named) : [named];
  const types: TypePlan[] = [];
  // The largest over the types (NaN if any is NaN: not constant); 0 for none (an interface nobody implements).
  let fixedField = 0;
  let fixedType = 0;
  let expanded = 0;
  for (const object of objects) {
    const type = compileType(compiler, object, selectionSets, sizing);
    types.push(type);
    fixedField = Math.max(fixedField, type.fixedField);
    fixedType = Math.max(fixedType, type.fixedType);
    expanded = Math.max(expanded, type.expanded);
  }
  const plan: SelectionPlan = { types, fixedField, fixedType, expanded };
  const entry = { nodes, named, sizing, plan };
  if (known === undefined) compiler.memo.set(nodes[0]!, [entry]);
  else known.push(entry);
  return plan;
}

function same(a: readonly FieldNode[], b: readonly FieldNode[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i += 1) if (a[i] !== b[i]) return false;
  return true;
}
