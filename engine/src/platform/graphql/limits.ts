// Bounds on one GraphQL operation, checked before it runs: a query of 20,000 aliases or fields nested a hundred deep
// would otherwise hold the event loop for seconds. The control plane's own clients stay far below both.
import {
  getNamedType,
  getNullableType,
  GraphQLError,
  isInterfaceType,
  isListType,
  isObjectType,
  Kind,
  type ASTVisitor,
  type GraphQLNamedType,
  type SelectionSetNode,
  type ValidationContext,
} from 'graphql';

export const MAX_FIELDS = 1000;
export const MAX_DEPTH = 12;
/**
 * The most values an operation may answer, each list counted as LIST_GUESS items: lists that lead back to their parent
 * (`apps { environments { app { environments ... } } }`), aliased at each level, multiply in a query of 2 KB (an
 * answer of 50 MB held the event loop for seconds). The control plane's own queries (three lists deep) stay far below.
 */
export const MAX_VALUES = 100_000;
const LIST_GUESS = 10;

/** What a selection set asks for once every fragment is expanded: fields selected, levels of nesting, values answered. */
interface Cost {
  fields: number;
  depth: number;
  values: number;
}

/**
 * A validation rule: at most MAX_FIELDS field selections (aliases count) and MAX_DEPTH levels per operation, counted
 * as it runs, with every fragment spread expanded where it stands: fragments spread twice at each level of a chain
 * ask for exponentially many fields in a query of a few hundred bytes. Each fragment is costed once, so the check
 * itself stays linear in the query's size.
 */
export function operationLimits(context: ValidationContext): ASTVisitor {
  const fragments = new Map<string, Cost>();
  const visiting = new Set<string>(); // a cycle of fragments is NoFragmentCyclesRule's to report
  const none: Cost = { fields: 0, depth: 0, values: 0 };
  const schema = context.getSchema();

  const fragmentCost = (name: string): Cost => {
    const known = fragments.get(name);
    if (known) return known;
    const node = context.getFragment(name);
    if (!node || visiting.has(name)) return none;
    visiting.add(name);
    const cost = setCost(node.selectionSet, schema.getType(node.typeCondition.name.value));
    visiting.delete(name);
    fragments.set(name, cost);
    return cost;
  };

  /** The set's own level counts one; a fragment's selections join the level where it is spread. */
  const setCost = (set: SelectionSetNode, type: GraphQLNamedType | null | undefined): Cost => {
    let fields = 0;
    let below = 0;
    let values = 0;
    const defs = type && (isObjectType(type) || isInterfaceType(type)) ? type.getFields() : {};
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) {
        const def = Object.hasOwn(defs, s.name.value) ? defs[s.name.value] : undefined;
        const inner = s.selectionSet ? setCost(s.selectionSet, def && getNamedType(def.type)) : none;
        fields += 1 + inner.fields;
        below = Math.max(below, inner.depth);
        values += 1 + (def && isListType(getNullableType(def.type)) ? LIST_GUESS : 1) * inner.values;
      } else {
        const inner =
          s.kind === Kind.INLINE_FRAGMENT
            ? setCost(s.selectionSet, s.typeCondition ? schema.getType(s.typeCondition.name.value) : type)
            : fragmentCost(s.name.value);
        fields += inner.fields;
        below = Math.max(below, inner.depth - 1);
        values += inner.values;
      }
    }
    return { fields, depth: 1 + below, values: Math.min(values, Number.MAX_SAFE_INTEGER) };
  };

  return {
    OperationDefinition(node) {
      const cost = setCost(node.selectionSet, schema.getRootType(node.operation));
      if (cost.fields > MAX_FIELDS) context.reportError(new GraphQLError(`the operation selects more than ${MAX_FIELDS} fields; split it into smaller ones`));
      else if (cost.depth > MAX_DEPTH) context.reportError(new GraphQLError(`the operation nests more than ${MAX_DEPTH} levels deep; ask for less at once`));
      else if (cost.values > MAX_VALUES)
        context.reportError(
          new GraphQLError(
            `the operation could answer more than ${MAX_VALUES} values (lists within lists, each counted as ${LIST_GUESS} items); ask for less at once, or one list at a time`,
          ),
        );
    },
  };
}
