import { ConfigError } from '@sluice/core';
import {
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputObjectType,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLOutputType,
  type GraphQLSchema,
  getNamedType,
  getNullableType,
  isAbstractType,
  isCompositeType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isListType,
  isNamedType,
  isObjectType,
  isScalarType,
  isUnionType,
} from 'graphql';
import { type DirectedElement, directiveArguments } from './directives.js';

/*
 * The cost model of one schema, built once (WeakMap on the schema): every weight and list size of the IBM cost
 * spec resolved to numbers, and the schema checked against the spec's validation section (§9). A schema the
 * spec rejects throws a ConfigError listing every problem, when the estimator is built.
 */

/** An argument's or input field's weight (its @cost, else 1 for an input object type and 0 for a leaf). */
export interface InputWeight {
  readonly weight: number;
  readonly type: GraphQLInputType;
  /** The schema's default value, if any (a slicing argument's size when the query gives none). */
  readonly defaultValue: unknown;
}

export interface InputFieldWeight {
  readonly name: string;
  readonly weight: number;
  readonly type: GraphQLInputType;
}

/** A field's @listSize, defaults applied. */
export interface ListSize {
  readonly assumedSize: number | undefined;
  readonly slicingArguments: readonly string[];
  readonly sizedFields: readonly string[];
  readonly requireOneSlicingArgument: boolean;
}

export interface FieldModel {
  /** The field's @cost, else the spec's default: 0 for a field returning a scalar or enum, 1 otherwise. */
  readonly weight: number;
  /** Its own @listSize, else that of the same field on an interface it implements. */
  readonly listSize: ListSize | undefined;
  readonly args: ReadonlyMap<string, InputWeight>;
  /** How many lists wrap the field's named type: 0 for `User`, 1 for `[User!]!`, 2 for `[[User]]`. */
  readonly listDepth: number;
  readonly named: GraphQLNamedType;
}

export interface CostModel {
  readonly schema: GraphQLSchema;
  /** The model of a field (meta fields such as __typename included). */
  field(def: GraphQLField<unknown, unknown>): FieldModel;
  /** Type weight: @cost, else 1 for objects and 0 for scalars and enums; interfaces and unions, their members' maximum. */
  typeWeight(type: GraphQLNamedType): number;
  /** An input object's fields with their weights, listed once. */
  inputFields(type: GraphQLInputObjectType): readonly InputFieldWeight[];
  /** The weights of a directive's arguments (as @approx(tolerance: Float! @cost(weight: "-1.0"))). */
  directiveArgs(name: string): ReadonlyMap<string, InputWeight> | undefined;
}

const models = new WeakMap<GraphQLSchema, CostModel>();

/** The schema's model, built on first use and kept for the schema's life. */
export function costModel(schema: GraphQLSchema): CostModel {
  let model = models.get(schema);
  if (model === undefined) {
    model = buildModel(schema);
    models.set(schema, model);
  }
  return model;
}

const FLOAT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

class ModelBuilder {
  readonly problems: string[] = [];
  readonly fields = new Map<GraphQLField<unknown, unknown>, FieldModel>();
  readonly types = new Map<GraphQLNamedType, number>();
  readonly inputTypes = new Map<GraphQLInputObjectType, readonly InputFieldWeight[]>();
  readonly directives = new Map<string, ReadonlyMap<string, InputWeight>>();

  constructor(readonly schema: GraphQLSchema) {}

  /** The weight of @cost on an element, or undefined when it has none (a bad weight is a problem). */
  weight(element: DirectedElement, where: string): number | undefined {
    const args = directiveArguments(element, 'cost');
    if (args === undefined) return undefined;
    const raw = args.weight;
    const value = typeof raw === 'string' && FLOAT.test(raw.trim()) ? Number(raw) : raw;
    if (typeof value === 'number' && Number.isFinite(value)) return value;
    this.problems.push(`${where}: @cost(weight: ${JSON.stringify(raw)}) is not a serialized Float`);
    return undefined;
  }

  inputWeights(args: readonly GraphQLArgument[], owner: string): ReadonlyMap<string, InputWeight> {
    const weights = new Map<string, InputWeight>();
    for (const arg of args) {
      const fallback = isInputObjectType(getNamedType(arg.type)) ? 1 : 0;
      const weight = this.weight(arg, `${owner}(${arg.name}:)`) ?? fallback;
      weights.set(arg.name, { weight, type: arg.type, defaultValue: arg.defaultValue });
    }
    return weights;
  }
}

function buildModel(schema: GraphQLSchema): CostModel {
  const builder = new ModelBuilder(schema);
  const typeMap = schema.getTypeMap();
  for (const type of Object.values(typeMap)) readType(builder, type);
  for (const type of Object.values(typeMap)) {
    if (isAbstractType(type)) {
      const weights = schema.getPossibleTypes(type).map((member) => builder.types.get(member) ?? 1);
      builder.types.set(type, weights.length === 0 ? 1 : Math.max(...weights));
    }
  }
  for (const directive of schema.getDirectives()) {
    builder.directives.set(directive.name, builder.inputWeights(directive.args, `@${directive.name}`));
  }
  if (builder.problems.length > 0) {
    throw new ConfigError(
      `the schema's @cost / @listSize do not follow the IBM cost spec:\n${builder.problems.map((p) => `  ${p}`).join('\n')}`,
    );
  }
  return {
    schema,
    field: (def) => builder.fields.get(def) ?? metaField(builder, def),
    typeWeight: (type) => builder.types.get(type) ?? (isCompositeType(type) ? 1 : 0),
    inputFields: (type) => builder.inputTypes.get(type) ?? [],
    directiveArgs: (name) => builder.directives.get(name),
  };
}

function readType(builder: ModelBuilder, type: GraphQLNamedType): void {
  if (isObjectType(type) || isScalarType(type) || isEnumType(type)) {
    // A type cost, like a field's, is never negative: a negative type weight counts as zero.
    builder.types.set(type, Math.max(0, builder.weight(type, type.name) ?? (isObjectType(type) ? 1 : 0)));
  } else if (directiveArguments(type, 'cost') !== undefined) {
    // §7.2: an abstract type weighs its heaviest member; an input object, what its fields weigh.
    builder.problems.push(`${type.name}: @cost is not allowed on ${kindOf(type)} (spec §7.2)`);
  }
  if (isInputObjectType(type)) {
    const weights: InputFieldWeight[] = [];
    for (const field of Object.values(type.getFields())) {
      const fallback = isInputObjectType(getNamedType(field.type)) ? 1 : 0;
      const weight = builder.weight(field, `${type.name}.${field.name}`) ?? fallback;
      weights.push({ name: field.name, weight, type: field.type });
    }
    builder.inputTypes.set(type, weights);
  }
  if (isObjectType(type) || isInterfaceType(type)) {
    for (const field of Object.values(type.getFields())) {
      builder.fields.set(
        field as GraphQLField<unknown, unknown>,
        readField(builder, type.name, field, isInterfaceType(type)),
      );
    }
    if (isObjectType(type)) inheritListSizes(builder, type);
  }
}

function kindOf(type: GraphQLNamedType): string {
  if (isInterfaceType(type)) return 'an interface';
  if (isUnionType(type)) return 'a union';
  return 'an input object';
}

function readField(
  builder: ModelBuilder,
  owner: string,
  field: GraphQLField<unknown, unknown>,
  onInterface: boolean,
): FieldModel {
  const where = `${owner}.${field.name}`;
  const own = builder.weight(field, where);
  if (own !== undefined && onInterface) {
    builder.problems.push(`${where}: @cost is not allowed on an interface's field (spec §9.1.1)`);
  }
  const named = getNamedType(field.type);
  return {
    weight: onInterface ? defaultWeight(named) : (own ?? defaultWeight(named)),
    listSize: readListSize(builder, where, field),
    args: builder.inputWeights(field.args, where),
    listDepth: listDepth(field.type),
    named,
  };
}

function defaultWeight(named: GraphQLNamedType): number {
  return isCompositeType(named) ? 1 : 0;
}

export function listDepth(type: GraphQLOutputType): number {
  let depth = 0;
  let current: GraphQLOutputType = getNullableType(type);
  while (isListType(current)) {
    depth += 1;
    current = getNullableType(current.ofType);
  }
  return depth;
}

/** An object's field without @listSize takes that of the same field on an interface it implements. */
function inheritListSizes(builder: ModelBuilder, type: GraphQLNamedType): void {
  if (!isObjectType(type)) return;
  for (const field of Object.values(type.getFields())) {
    const model = builder.fields.get(field as GraphQLField<unknown, unknown>);
    if (model === undefined || model.listSize !== undefined) continue;
    for (const face of type.getInterfaces()) {
      const inherited = face.getFields()[field.name];
      const listSize = inherited === undefined ? undefined : readListSize(undefined, '', inherited);
      if (listSize !== undefined) {
        builder.fields.set(field as GraphQLField<unknown, unknown>, { ...model, listSize });
        break;
      }
    }
  }
}

function readListSize(
  builder: ModelBuilder | undefined,
  where: string,
  field: GraphQLField<unknown, unknown>,
): ListSize | undefined {
  const args = directiveArguments(field, 'listSize');
  if (args === undefined) return undefined;
  const listSize: ListSize = {
    assumedSize: typeof args.assumedSize === 'number' ? args.assumedSize : undefined,
    slicingArguments: strings(args.slicingArguments),
    sizedFields: strings(args.sizedFields),
    requireOneSlicingArgument: args.requireOneSlicingArgument !== false,
  };
  if (builder !== undefined) builder.problems.push(...listSizeProblems(where, field, listSize, args));
  return listSize;
}

function strings(value: unknown): readonly string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

/** The spec's §9.2 rules for one field's @listSize. */
function listSizeProblems(
  where: string,
  field: GraphQLField<unknown, unknown>,
  listSize: ListSize,
  raw: Readonly<Record<string, unknown>>,
): string[] {
  const problems: string[] = [];
  const { assumedSize, slicingArguments, sizedFields } = listSize;
  if (raw.assumedSize !== undefined && raw.assumedSize !== null) {
    if (assumedSize === undefined || !Number.isInteger(assumedSize) || assumedSize < 0) {
      problems.push(
        `${where}: @listSize(assumedSize: ${JSON.stringify(raw.assumedSize)}) is not an integer >= 0`,
      );
    }
  }
  if (listDepth(field.type) === 0 && sizedFields.length === 0) {
    problems.push(
      `${where}: @listSize on a field that returns no list and names no sizedFields (spec §9.2.1)`,
    );
  }
  const named = getNamedType(field.type);
  for (const name of sizedFields) {
    const sized = isObjectType(named) || isInterfaceType(named) ? named.getFields()[name] : undefined;
    if (sized === undefined) {
      problems.push(
        `${where}: sizedFields names "${name}", which ${named.name} does not define (spec §9.2.2)`,
      );
    } else if (listDepth(sized.type) === 0) {
      problems.push(`${where}: sizedFields names "${name}", which returns no list (spec §9.2.2)`);
    }
  }
  for (const name of slicingArguments) {
    const arg = field.args.find((candidate) => candidate.name === name);
    const type = arg === undefined ? undefined : getNullableType(arg.type);
    if (arg === undefined) {
      problems.push(
        `${where}: slicingArguments names "${name}", which the field does not define (spec §9.2.3)`,
      );
    } else if (!isNamedType(type) || type.name !== 'Int') {
      problems.push(
        `${where}: slicing argument "${name}" is ${String(arg.type)}, not Int or Int! (spec §9.2.3)`,
      );
    }
  }
  if (assumedSize !== undefined && slicingArguments.length > 0) {
    const withDefault = field.args.some(
      (a) => slicingArguments.includes(a.name) && a.defaultValue !== undefined,
    );
    if (withDefault || listSize.requireOneSlicingArgument) {
      problems.push(
        `${where}: assumedSize beside slicingArguments needs requireOneSlicingArgument: false and no slicing argument with a default (spec §9.2.4)`,
      );
    }
  }
  return problems;
}

const metaFields = new WeakMap<GraphQLField<unknown, unknown>, FieldModel>();

/** __schema, __type, __typename: no directives, the spec's default weights. */
function metaField(builder: ModelBuilder, def: GraphQLField<unknown, unknown>): FieldModel {
  let model = metaFields.get(def);
  if (model === undefined) {
    model = readField(builder, '', def, false);
    metaFields.set(def, model);
  }
  return model;
}
