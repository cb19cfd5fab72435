// Pure logic behind the run command's input box: the JSON prefilled from the function's parameters, and
// parsing what the user typed back into the object sent as `input` (queue) or the body (load-balanced route).
import { sampleArgs } from '../../engine/src/deploy';
import type { EndpointSpec, FunctionInfo } from '../../engine/src/project';

/** The function a code lens or tree node names, within its endpoint (a route's function for LB endpoints). */
export function functionOf(ep: EndpointSpec, fnName: string, method?: string, routePath?: string): FunctionInfo | undefined {
  if (ep.kind === 'LOAD_BALANCED') {
    const r =
      ep.routes.find((x) => (method === undefined || x.method === method) && (routePath === undefined || x.path === routePath) && x.function.name === fnName) ??
      ep.routes.find((x) => x.function.name === fnName);
    return r?.function;
  }
  return ep.functions.find((f) => f.name === fnName) ?? ep.functions[0];
}

/** Compact JSON of the parameters: defaults where given, a placeholder of the annotated type otherwise. */
export function prefillInput(fn: FunctionInfo | undefined): string {
  return JSON.stringify(sampleArgs(fn));
}

export type ParsedInput = { ok: true; value: Record<string, unknown> } | { ok: false; message: string };

/** The input box's validation: a JSON object (an empty box means `{}`). */
export function parseInput(text: string): ParsedInput {
  if (!text.trim()) return { ok: true, value: {} };
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    return { ok: false, message: `not valid JSON: ${(e as Error).message}` };
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return { ok: false, message: 'the input must be a JSON object, e.g. {"prompt": "hello"}' };
  return { ok: true, value: v as Record<string, unknown> };
}
