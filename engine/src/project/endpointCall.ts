// One `Endpoint(...)` call read into an EndpointSpec: its arguments evaluated without running the code (literals,
// constants, catalog members), every parameter rule applied, its name checked. The call may decorate a function or
// class (queue-based) or make a load-balanced endpoint object; analyze.ts finds the calls.
import type { SyntaxNode } from './parser';
import type { ConfigValue, DynamicValue, EndpointKind, EndpointSpec } from './model';
import { evaluate, type EvalScope } from './values';
import { children, isExtra, rangeOf } from './syntax';
import { parameterMessage } from '../catalog/parameterRules';
import { DiagnosticSink, ENDPOINT_NAME, isKnownParameter, validateEndpointArgs, validEndpointName, type EndpointArgs } from './rules';

export function endpointFromCall(
  call: SyntaxNode,
  kind: EndpointKind,
  defaultName: string,
  model: { file: string; module: string },
  scope: EvalScope,
  sink: DiagnosticSink,
): EndpointSpec {
  const a: EndpointArgs = { args: {}, dynamicArgs: {}, unknownEnums: [], unknownParams: [] };
  const argList = call.childForFieldName('arguments');
  let positional = 0;
  const seenKeys = new Set<string>();
  for (const arg of argList ? children(argList) : []) {
    if (isExtra(arg)) continue;
    let key: string;
    let valueNode: SyntaxNode | null;
    if (arg.type === 'keyword_argument') {
      key = arg.childForFieldName('name')?.text ?? '';
      valueNode = arg.childForFieldName('value');
    } else if (arg.type === 'list_splat' || arg.type === 'dictionary_splat') {
      sink.add(
        'not-literal',
        'Endpoint arguments must be written out as name=value: the build reads them without running your code, so *args and **kwargs cannot be used.',
        rangeOf(arg),
      );
      continue;
    } else {
      if (positional++ > 0) {
        sink.add('invalid-type', 'Endpoint takes only name as a positional argument: pass the others as keywords, e.g. gpu=GpuGroup.ADA_24.', rangeOf(arg));
        continue;
      }
      key = 'name';
      valueNode = arg;
    }
    if (!valueNode) continue;
    if (seenKeys.has(key)) {
      sink.add('duplicate-argument', `${key} is given more than once (Python refuses a repeated keyword argument): keep one.`, rangeOf(arg));
      continue;
    }
    seenKeys.add(key);
    if (!isKnownParameter(key)) {
      a.unknownParams.push({ name: key, range: rangeOf(arg.type === 'keyword_argument' ? arg.childForFieldName('name')! : arg) });
      continue;
    }
    const r = evaluate(valueNode, scope);
    if (r.ok) {
      a.args[key] = {
        value: r.value,
        argRange: rangeOf(arg),
        valueRange: rangeOf(valueNode),
        source: r.source,
        text: valueNode.text,
        ...(r.float ? { float: true } : {}),
      } satisfies ConfigValue;
    } else if (r.reason === 'unknown-enum') {
      a.unknownEnums.push({ param: key, range: rangeOf(r.node), enumClass: r.enumClass!, member: r.member!, written: r.node!.text.replace(/\s+/g, '') });
    } else {
      a.dynamicArgs[key] = { argRange: rangeOf(arg), valueRange: rangeOf(valueNode), text: valueNode.text } satisfies DynamicValue;
    }
  }
  const config = validateEndpointArgs(a, sink);
  const nameArg = a.args.name;
  let name = defaultName;
  if (nameArg && typeof nameArg.value === 'string') name = nameArg.value;
  else if (nameArg && nameArg.value !== null) sink.add('invalid-endpoint-name', `name must be a string, got ${nameArg.text}.`, nameArg.valueRange);
  const nameRange = nameArg?.valueRange ?? rangeOf(call);
  // The name given, else the one taken from the code (the Python package refuses either at import).
  const checked = nameArg ? (typeof nameArg.value === 'string' ? nameArg.value : null) : defaultName;
  if (checked !== null && !ENDPOINT_NAME.test(checked)) {
    const cleaned = validEndpointName(checked);
    const shown = !nameArg
      ? `${JSON.stringify(checked)} (the name it takes from the code when no name= is given)`
      : nameArg.source === 'literal'
        ? nameArg.text
        : `${JSON.stringify(checked)} (the value of ${nameArg.text})`;
    const rule = parameterMessage('invalid-name', { value: shown }).slice(0, -1);
    const advice = !cleaned ? '.' : nameArg ? `, e.g. "${cleaned}".` : `; give it one, e.g. name="${cleaned}".`;
    sink.add('invalid-endpoint-name', rule + advice, nameRange, {
      fix:
        cleaned && ENDPOINT_NAME.test(cleaned) && nameArg?.source === 'literal'
          ? { kind: 'rename-endpoint', range: nameRange, suggestion: cleaned }
          : undefined,
    });
  }
  return {
    name,
    kind,
    file: model.file,
    module: model.module,
    nameRange,
    callRange: rangeOf(call),
    args: a.args,
    dynamicArgs: a.dynamicArgs,
    config,
    functions: [],
    routes: [],
  };
}
