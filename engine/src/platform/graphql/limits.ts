// Bounds on one GraphQL operation, checked before it runs: a query of 20,000 aliases or fields nested a hundred deep
// would otherwise hold the event loop for seconds. The control plane's own clients stay far below both.
import { GraphQLError, type ASTVisitor, type ValidationContext } from 'graphql';

export const MAX_FIELDS = 1000;
export const MAX_DEPTH = 12;

/** A validation rule: at most MAX_FIELDS field selections (aliases and fragment spreads count) and MAX_DEPTH levels. */
export function operationLimits(context: ValidationContext): ASTVisitor {
  let fields = 0;
  let depth = 0;
  let reported = false;
  const report = (message: string) => {
    if (reported) return;
    reported = true;
    context.reportError(new GraphQLError(message));
  };
  return {
    Field() {
      if (++fields > MAX_FIELDS) report(`the operation selects more than ${MAX_FIELDS} fields; split it into smaller ones`);
    },
    FragmentSpread() {
      if (++fields > MAX_FIELDS) report(`the operation selects more than ${MAX_FIELDS} fields; split it into smaller ones`);
    },
    SelectionSet: {
      enter() {
        if (++depth > MAX_DEPTH) report(`the operation nests more than ${MAX_DEPTH} levels deep; ask for less at once`);
      },
      leave() {
        depth--;
      },
    },
  };
}
