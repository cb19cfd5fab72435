// Pure logic behind the run command's input box: the JSON prefilled from the function's parameters, and
// parsing what the user typed back into the object sent as `input` (queue) or the body (load-balanced route), and
// where the box's first value comes from (the last input, test_input.json, the parameters).
import { sampleArgs } from '../../engine/src/project/sampleInput';
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

/** The `input` object of a test_input.json (`{"input": {...}}`, the local test server's file); undefined when it has none. */
export function testInputOf(text: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(text) as { input?: unknown };
    const input = typeof v === 'object' && v !== null ? v.input : undefined;
    return typeof input === 'object' && input !== null && !Array.isArray(input) ? (input as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Where the input box's first value comes from, in this order. */
export type InputSource = 'last input' | 'test_input.json' | 'parameters';

/** The input box's first value: the last input given for this function, else test_input.json, else the parameters. */
export function initialInput(
  last: Record<string, unknown> | undefined,
  testInputText: string | undefined,
  fn: FunctionInfo | undefined,
): { text: string; source: InputSource } {
  if (last) return { text: JSON.stringify(last), source: 'last input' };
  const fromFile = testInputText === undefined ? undefined : testInputOf(testInputText);
  if (fromFile) return { text: JSON.stringify(fromFile), source: 'test_input.json' };
  return { text: prefillInput(fn), source: 'parameters' };
}

/** The test_input.json files that may hold a function's input: beside its file, then at the project root. */
export function testInputCandidates(file: string): string[] {
  const dir = file.includes('/') ? file.slice(0, file.lastIndexOf('/')) : '';
  return [...new Set([dir ? `${dir}/test_input.json` : 'test_input.json', 'test_input.json'])];
}
