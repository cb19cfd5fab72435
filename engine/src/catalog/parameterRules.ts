// The rules of the endpoint parameters (bounds, defaults, messages) as pure checks over plain values. The
// analysis, the platform's check of a saved endpoint and the generated Python package all answer in these words.
import data from './catalog.json';
import { limits, parameterDoc } from './index';

export type MessageKey = keyof typeof data.messages;

/** A catalog message with its `{placeholders}` filled; the Python package fills the same text with str.format. */
export function parameterMessage(key: MessageKey, vars: Record<string, string | number> = {}): string {
  return data.messages[key].replace(/\{(\w+)\}/g, (whole, name: string) => (name in vars ? String(vars[name]) : whole));
}

/** Typed defaults of the parameters that have one (catalog.json `defaultValue`). */
export const parameterDefaults = {
  workers: defaultOf('workers') as [number, number],
  idleTimeout: defaultOf('idle_timeout') as number,
  gpuCount: defaultOf('gpu_count') as number,
  maxConcurrency: defaultOf('max_concurrency') as number,
};

function defaultOf(name: string): unknown {
  const p = data.parameters.find((x) => x.name === name) as { defaultValue?: unknown } | undefined;
  if (p?.defaultValue === undefined) throw new Error(`catalog.json: parameter ${name} has no defaultValue`);
  return p.defaultValue;
}

/** Endpoint names: what the control plane, the URLs and the Python package accept. */
export const ENDPOINT_NAME = new RegExp(data.endpointNamePattern);

export type ParameterCode = 'invalid-workers' | 'invalid-type' | 'out-of-range';
export type Checked<T> = { ok: true; value: T } | { ok: false; code: ParameterCode; message: string; swapped?: [number, number] };

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);
const fail = (code: ParameterCode, message: string, swapped?: [number, number]): Checked<never> => ({ ok: false, code, message, swapped });

/**
 * `workers`: an int n means (0, n); a pair is (min, max); 0 <= min <= max, 1 <= max <= the platform's bound.
 * `shown` is how the value reads to the user (its source text, its repr): it goes into the message.
 */
export function checkWorkers(v: unknown, shown: string = JSON.stringify(v)): Checked<{ min: number; max: number }> {
  let min: number;
  let max: number;
  if (isInt(v)) [min, max] = [0, v];
  else if (Array.isArray(v) && v.length === 2 && isInt(v[0]) && isInt(v[1])) [min, max] = v as [number, number];
  else return fail('invalid-workers', parameterMessage('workers-shape', { value: shown }));
  if (min < 0 || max < 0) return fail('invalid-workers', parameterMessage('workers-negative', { min, max }));
  if (min > max) return fail('invalid-workers', parameterMessage('workers-order', { min, max }), [max, min]);
  if (max === 0) return fail('invalid-workers', parameterMessage('workers-empty'));
  const limit = limits.workersMaxUpperBound;
  if (max > limit) return fail('out-of-range', parameterMessage('workers-upper', { max, limit }));
  return { ok: true, value: { min, max } };
}

/** An integer parameter with catalog bounds (idle_timeout, gpu_count, execution_timeout_ms, max_concurrency). */
export function checkIntParameter(param: string, v: unknown, shown: string = JSON.stringify(v)): Checked<number> {
  const doc = parameterDoc(param);
  if (doc?.min === undefined || doc.max === undefined) throw new Error(`catalog.json: parameter ${param} has no bounds`);
  const vars = { param, min: doc.min, max: doc.max, value: shown };
  if (!isInt(v)) return fail('invalid-type', parameterMessage('int-type', vars));
  if (v < doc.min || v > doc.max) {
    const own = `${param}-range`;
    return fail('out-of-range', parameterMessage(own in data.messages ? (own as MessageKey) : 'int-range', vars));
  }
  return { ok: true, value: v };
}

/** Parameters checked by checkIntParameter, in catalog order. */
export const intParameters: readonly string[] = data.parameters.filter((p) => 'min' in p && 'max' in p).map((p) => p.name);
