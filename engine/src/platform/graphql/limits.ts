// Bounds on one GraphQL operation, checked before it runs: a query of 20,000 aliases or fields nested a hundred deep
// would otherwise hold the event loop for seconds. The control plane's own clients stay far below both.
import { GraphQLError, Kind, type ASTVisitor, type SelectionSetNode, type ValidationContext } from 'graphql';

export const MAX_FIELDS = 1000;
export const MAX_DEPTH = 12;

/** What a selection set asks for once every fragment is expanded: fields selected, and levels of nesting. */
interface Cost {
  fields: number;
  depth: number;
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
  const none: Cost = { fields: 0, depth: 0 };

  const fragmentCost = (name: string): Cost => {
    const known = fragments.get(name);
    if (known) return known;
    const node = context.getFragment(name);
    if (!node || visiting.has(name)) return none;
    visiting.add(name);
    const cost = setCost(node.selectionSet);
    visiting.delete(name);
    fragments.set(name, cost);
    return cost;
  };

  /** The set's own level counts one; a fragment's selections join the level where it is spread. */
  const setCost = (set: SelectionSetNode): Cost => {
    let fields = 0;
    let below = 0;
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) {
        const inner = s.selectionSet ? setCost(s.selectionSet) : none;
        fields += 1 + inner.fields;
        below = Math.max(below, inner.depth);
      } else {
        const inner = s.kind === Kind.INLINE_FRAGMENT ? setCost(s.selectionSet) : fragmentCost(s.name.value);
        fields += inner.fields;
        below = Math.max(below, inner.depth - 1);
      }
    }
    return { fields, depth: 1 + below };
  };

  return {
    OperationDefinition(node) {
      const cost = setCost(node.selectionSet);
      if (cost.fields > MAX_FIELDS) context.reportError(new GraphQLError(`the operation selects more than ${MAX_FIELDS} fields; split it into smaller ones`));
      else if (cost.depth > MAX_DEPTH) context.reportError(new GraphQLError(`the operation nests more than ${MAX_DEPTH} levels deep; ask for less at once`));
    },
  };
}
