// Validation of one endpoint's configuration (the decorator's arguments), with the stable codes and
// messages that the build and the language server both show. Also turns the arguments into EndpointConfig.
import { cpuShapes, didYouMean, enumClasses, findCpu, findGpu, gpuGroups, gpuTypes, parameterDoc, parameters } from '../catalog';
import type { ConfigValue, Diagnostic, DynamicValue, EndpointConfig, FixData, Range, RuleCode, Severity } from './model';

export const ENDPOINT_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;
const REQUIREMENT =
  /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?(?:\s*\[\s*[A-Za-z0-9._-]+(?:\s*,\s*[A-Za-z0-9._-]+)*\s*\])?\s*(?:(?:(?:===|==|!=|~=|>=|<=|<|>)\s*[A-Za-z0-9.*+!_-]+)(?:\s*,\s*(?:===|==|!=|~=|>=|<=|<|>)\s*[A-Za-z0-9.*+!_-]+)*|@\s*\S+)?\s*(?:;.*)?$/;

export interface EndpointArgs {
  args: Record<string, ConfigValue>;
  dynamicArgs: Record<string, DynamicValue>;
  /** Enum members that do not exist (`GpuGroup.ADA_2`), by parameter name. */
  unknownEnums: Array<{ param: string; range: Range; enumClass: string; member: string }>;
  /** Keyword names that are not parameters of Endpoint. */
  unknownParams: Array<{ name: string; range: Range }>;
}

export class DiagnosticSink {
  readonly items: Diagnostic[] = [];
  constructor(readonly file: string) {}
  add(code: RuleCode, message: string, range: Range, extra: { severity?: Severity; fix?: FixData; related?: Diagnostic['related'] } = {}): void {
    this.items.push({ code, severity: extra.severity ?? 'error', message, file: this.file, range, fix: extra.fix, related: extra.related });
  }
}

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);
const isStringList = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

export function validateEndpointArgs(a: EndpointArgs, sink: DiagnosticSink): EndpointConfig {
  const config: EndpointConfig = { workersMin: 0, workersMax: 1, dependencies: [], idleTimeout: 60, env: {}, gpuCount: 1, maxConcurrency: 1 };

  for (const u of a.unknownParams) {
    const known = parameters.map((p) => p.name);
    const guess = didYouMean(u.name, known);
    sink.add('unknown-parameter', `'${u.name}' is not a parameter of Endpoint${guess ? `: did you mean '${guess}'?` : `; use one of ${known.join(', ')}.`}`, u.range);
  }
  for (const [param, d] of Object.entries(a.dynamicArgs)) {
    sink.add('not-literal', `${param} must be a literal value (a string, number, list, dict, a catalog member such as GpuGroup.ADA_24, or a module-level constant bound to one), because the build reads it without running your code.`, d.valueRange);
  }
  for (const u of a.unknownEnums) {
    const guess = didYouMean(u.member, Object.keys(enumClasses[u.enumClass]));
    const code: RuleCode = u.enumClass === 'CpuInstanceType' ? 'unknown-cpu' : 'unknown-gpu';
    sink.add(code, `${u.enumClass}.${u.member} does not exist${guess ? `: did you mean ${u.enumClass}.${guess}?` : '.'}`, u.range, {
      fix: guess ? { kind: 'replace-value', range: u.range, replacement: `${u.enumClass}.${guess}` } : undefined,
    });
  }

  const gpu = a.args.gpu;
  const cpu = a.args.cpu;
  const hasGpu = gpu !== undefined && gpu.value !== null;
  const hasCpu = cpu !== undefined && cpu.value !== null;
  if (hasGpu && hasCpu) {
    const message = 'gpu and cpu are mutually exclusive: specify one or neither (neither means any GPU).';
    sink.add('gpu-and-cpu', message, gpu.argRange, { fix: { kind: 'keep-gpu-or-cpu', gpuArg: gpu.argRange, cpuArg: cpu.argRange } });
    sink.add('gpu-and-cpu', message, cpu.argRange, { fix: { kind: 'keep-gpu-or-cpu', gpuArg: gpu.argRange, cpuArg: cpu.argRange } });
  }
  if (hasGpu) config.gpu = checkGpu(gpu, sink);
  if (hasCpu) config.cpu = checkCpu(cpu, sink);
  if (!hasGpu && !hasCpu && !a.dynamicArgs.gpu && !a.dynamicArgs.cpu && !a.unknownEnums.length) config.gpu = ['any'];

  const workers = a.args.workers;
  if (workers && workers.value !== null) checkWorkers(workers, config, sink);

  const deps = a.args.dependencies;
  if (deps && deps.value !== null) {
    if (!isStringList(deps.value)) {
      sink.add('invalid-dependencies', 'dependencies must be a list of requirement strings, e.g. ["requests>=2.31", "pillow"].', deps.valueRange);
    } else {
      const bad = deps.value.filter((r) => !REQUIREMENT.test(r.trim()));
      if (bad.length) sink.add('invalid-dependencies', `${bad.map((b) => JSON.stringify(b)).join(', ')} ${bad.length === 1 ? 'is not a valid requirement' : 'are not valid requirements'}: use a package name with an optional version, e.g. "requests>=2.31".`, deps.valueRange);
      else config.dependencies = deps.value.map((r) => r.trim());
    }
  }

  config.idleTimeout = checkInt(a.args.idle_timeout, 'idle_timeout', sink, 'idle timeout must be between 1 and 3600 seconds') ?? 60;
  config.gpuCount = checkInt(a.args.gpu_count, 'gpu_count', sink) ?? 1;
  config.maxConcurrency = checkInt(a.args.max_concurrency, 'max_concurrency', sink) ?? 1;
  config.executionTimeoutMs = checkInt(a.args.execution_timeout_ms, 'execution_timeout_ms', sink);

  const env = a.args.env;
  if (env && env.value !== null) {
    const v = env.value;
    if (typeof v !== 'object' || Array.isArray(v)) {
      sink.add('invalid-env', 'env must be a dict of strings, e.g. {"MODEL": "small"}.', env.valueRange);
    } else {
      const entries = Object.entries(v as Record<string, unknown>);
      const badKey = entries.find(([k]) => k.startsWith('\u0000') || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(k));
      const badValue = entries.find(([, val]) => typeof val !== 'string');
      if (badKey) sink.add('invalid-env', `env key ${badKey[0].replace('\u0000', '')} is not a valid environment variable name: use letters, digits and '_' (not starting with a digit).`, env.valueRange);
      else if (badValue) sink.add('invalid-env', `env value of ${badValue[0]} must be a string: write it in quotes, e.g. "${String(badValue[1])}".`, env.valueRange);
      else config.env = v as Record<string, string>;
    }
  }
  return config;
}

function checkGpu(gpu: ConfigValue, sink: DiagnosticSink): string[] | undefined {
  const values = typeof gpu.value === 'string' ? [gpu.value] : gpu.value;
  if (!isStringList(values) || values.length === 0) {
    sink.add('invalid-type', 'gpu must be a GPU group or model (e.g. GpuGroup.ADA_24, "NVIDIA H200") or a non-empty list of them.', gpu.valueRange);
    return undefined;
  }
  const all = [...gpuGroups.map((g) => g.id), ...gpuTypes.map((t) => t.id)];
  let ok = true;
  for (const value of values) {
    if (findGpu(value)) continue;
    ok = false;
    const guess = didYouMean(value, all);
    const fix: FixData | undefined = guess && typeof gpu.value === 'string' && gpu.source === 'literal' ? { kind: 'replace-value', range: gpu.valueRange, replacement: JSON.stringify(guess) } : undefined;
    sink.add('unknown-gpu', `unknown GPU "${value}"${guess ? `: did you mean "${guess}"?` : `; use a GpuGroup (${gpuGroups.map((g) => g.id).join(', ')}) or a GpuType model name.`}`, gpu.valueRange, { fix });
  }
  return ok ? values : undefined;
}

function checkCpu(cpu: ConfigValue, sink: DiagnosticSink): string | undefined {
  if (typeof cpu.value !== 'string') {
    sink.add('invalid-type', 'cpu must be a CPU instance shape such as CpuInstanceType.CPU3C_2_4 or "cpu3c-2-4".', cpu.valueRange);
    return undefined;
  }
  if (findCpu(cpu.value)) return cpu.value;
  const guess = didYouMean(cpu.value, cpuShapes.map((c) => c.id));
  const fix: FixData | undefined = guess && cpu.source === 'literal' ? { kind: 'replace-value', range: cpu.valueRange, replacement: JSON.stringify(guess) } : undefined;
  sink.add('unknown-cpu', `unknown CPU shape "${cpu.value}"${guess ? `: did you mean "${guess}"?` : `; shapes are family-vCPUs-GiB: ${cpuShapes.map((c) => c.id).join(', ')}.`}`, cpu.valueRange, { fix });
  return undefined;
}

function checkWorkers(w: ConfigValue, config: EndpointConfig, sink: DiagnosticSink): void {
  const v = w.value;
  let min: number;
  let max: number;
  if (isInt(v)) {
    min = 0;
    max = v;
  } else if (Array.isArray(v) && v.length === 2 && isInt(v[0]) && isInt(v[1])) {
    [min, max] = v as [number, number];
  } else {
    sink.add('invalid-workers', 'workers must be an int n, meaning (0, n), or a pair (min, max) of ints, e.g. workers=(0, 3).', w.valueRange);
    return;
  }
  if (min < 0 || max < 0) {
    sink.add('invalid-workers', `workers cannot be negative: (${min}, ${max}); use numbers >= 0.`, w.valueRange);
    return;
  }
  if (min > max) {
    const fix: FixData | undefined = Array.isArray(v) && w.source === 'literal' ? { kind: 'swap-workers', range: w.valueRange, replacement: `(${max}, ${min})` } : undefined;
    sink.add('invalid-workers', `workers min (${min}) cannot exceed max (${max}): did you mean (${max}, ${min})?`, w.valueRange, { fix });
    return;
  }
  if (max === 0) {
    sink.add('invalid-workers', 'workers max is 0, so the endpoint could never run a job: allow at least one worker, e.g. workers=(0, 1).', w.valueRange);
    return;
  }
  const upper = 100;
  if (max > upper) {
    sink.add('out-of-range', `workers max (${max}) is above the limit of ${upper}.`, w.valueRange);
    return;
  }
  config.workersMin = min;
  config.workersMax = max;
}

function checkInt(v: ConfigValue | undefined, param: string, sink: DiagnosticSink, rangeMessage?: string): number | undefined {
  if (!v || v.value === null) return undefined;
  const doc = parameterDoc(param);
  const min = doc?.min ?? 1;
  const max = doc?.max ?? Number.MAX_SAFE_INTEGER;
  if (!isInt(v.value)) {
    sink.add('invalid-type', `${param} must be an integer${doc ? ` between ${min} and ${max}` : ''}, got ${v.text}.`, v.valueRange);
    return undefined;
  }
  if (v.value < min || v.value > max) {
    sink.add('out-of-range', rangeMessage ? `${rangeMessage}, got ${v.value}.` : `${param} must be between ${min} and ${max}, got ${v.value}.`, v.valueRange);
    return undefined;
  }
  return v.value;
}

export function isKnownParameter(name: string): boolean {
  return parameters.some((p) => p.name === name);
}
