// POST {base_url}/graphql: checks the key, runs the operation against the control plane schema with the key's
// scope, and reports errors with `extensions.code` (BAD_REQUEST, FORBIDDEN, NOT_FOUND, CONFLICT, ...) so clients can
// act on them. UNAUTHENTICATED answers HTTP 401 and FORBIDDEN 403; other errors travel in a 200 answer.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { buildSchema, execute, GraphQLError, parse, specifiedRules, validate, type DocumentNode } from 'graphql';
import type { Principal } from '../auth';
import type { KeyRing } from '../controlPlane/keys';
import { PlatformError } from '../errors';
import { readBody, sendJson } from '../http';
import { rootValue, type GraphqlContext } from './resolvers';
import { operationLimits } from './limits';
import { typeDefs } from './schema';

const schema = buildSchema(typeDefs);
/** A manifest travels in finalizeBuild; nothing else comes close. */
const BODY_LIMIT = 8 * 1024 * 1024;

export function graphqlHandler(
  keys: KeyRing,
  ctx: (principal: Principal) => GraphqlContext,
  log: (l: string) => void,
  /** Runs before each operation: a node of a cluster catches up with changes other nodes committed. */
  before?: () => Promise<void>,
) {
  return async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const auth = keys.authenticate(req);
    if ('refused' in auth) {
      return sendJson(res, 401, { errors: [{ message: auth.refused, extensions: { code: 'UNAUTHENTICATED' } }] });
    }
    if (req.method !== 'POST') {
      return sendJson(res, 405, { errors: [{ message: 'send GraphQL operations with POST', extensions: { code: 'BAD_REQUEST' } }] });
    }
    const bad = (message: string) => sendJson(res, 400, { errors: [{ message, extensions: { code: 'BAD_REQUEST' } }] });
    let body: { query?: unknown; variables?: unknown; operationName?: unknown } | null;
    try {
      body = JSON.parse((await readBody(req, BODY_LIMIT, 'GraphQL requests')).toString('utf8')) as typeof body;
    } catch (e) {
      // Too large (413, TOO_LARGE) or stalled: said with the platform's status and code; else the JSON is bad.
      if (e instanceof PlatformError) return sendJson(res, e.status, { errors: [{ message: e.message, extensions: { code: e.code } }] });
      return bad(`the request is not valid JSON: ${(e as Error).message}`);
    }
    if (typeof body !== 'object' || body === null || typeof body.query !== 'string') return bad('the request needs a "query" string');
    const variables = body.variables ?? undefined;
    if (variables !== undefined && (typeof variables !== 'object' || Array.isArray(variables))) return bad('"variables" must be an object');
    let document: DocumentNode;
    try {
      document = parse(body.query, { maxTokens: 20_000 });
    } catch (e) {
      return sendJson(res, 200, { data: null, errors: [formatError(e as GraphQLError, log)] });
    }
    const invalid = validate(schema, document, [...specifiedRules, operationLimits]);
    if (invalid.length) return sendJson(res, 200, { data: null, errors: invalid.map((e) => formatError(e, log)) });
    try {
      await before?.();
    } catch (e) {
      if (!(e instanceof PlatformError)) throw e;
      return sendJson(res, e.status, { data: null, errors: [{ message: e.message, extensions: { code: e.status === 503 ? 'UNAVAILABLE' : 'INTERNAL' } }] });
    }
    const c = ctx(auth.principal);
    const result = await execute({
      schema,
      document,
      rootValue: rootValue(c),
      contextValue: c,
      variableValues: variables as Record<string, unknown> | undefined,
      operationName: typeof body.operationName === 'string' ? body.operationName : undefined,
    });
    const errors = result.errors?.map((e) => formatError(e, log));
    const status = errors?.some((e) => e.extensions.code === 'FORBIDDEN') ? 403 : errors?.some((e) => e.extensions.code === 'UNAVAILABLE') ? 503 : 200;
    sendJson(res, status, errors ? { data: result.data ?? null, errors } : { data: result.data });
  };
}

function formatError(e: GraphQLError, log: (l: string) => void) {
  const orig = e.originalError;
  // Validation and parse errors have no original error; a variable of the wrong type has graphql's own.
  let code = 'BAD_REQUEST';
  if (orig instanceof PlatformError) code = orig.code;
  else if (orig && !(orig instanceof GraphQLError)) {
    code = 'INTERNAL';
    log(`strato platform: GraphQL resolver failed: ${orig.stack ?? orig.message}`);
  }
  return { message: e.message, path: e.path, locations: e.locations, extensions: { code } };
}
