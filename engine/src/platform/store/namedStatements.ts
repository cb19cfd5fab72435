// Statements the platform runs again and again with new arguments (the group commit of jobs), and the two ways a
// driver runs them: planned once and then executed by name (the embedded database, where planning a group commit's
// statements cost more than running them: bench/platform-jobs.ts, the database thread's CPU per job), or with the
// arguments written in as literals, several statements in one round trip (a PostgreSQL server).

/** A statement with typed parameters `$1`..`$n`; its name is unique in the project. */
export interface NamedStatement {
  readonly name: string;
  readonly types: readonly string[];
  readonly sql: string;
}

/** One run of a statement; each argument is text, as its SQL literal would be. */
export interface NamedCall {
  readonly statement: NamedStatement;
  readonly args: readonly string[];
}

/** A SQL string literal (standard_conforming_strings: only quotes are doubled). */
const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;

/** The statement with its arguments in place of `$1`..`$n` (the project's statements have no `$` anywhere else). */
export function inlined({ statement, args }: NamedCall): string {
  return statement.sql.replace(/\$(\d+)/g, (_, n: string) => literal(args[Number(n) - 1]));
}

/** `PREPARE` of the statement, for a session that runs it by name. */
export const prepareSql = (s: NamedStatement) => `prepare ${s.name} (${s.types.join(', ')}) as ${s.sql}`;

/** `EXECUTE` of one run of a prepared statement. */
export const executeSql = ({ statement, args }: NamedCall) => `execute ${statement.name} (${args.map(literal).join(', ')})`;
