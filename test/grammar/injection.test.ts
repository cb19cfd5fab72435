// The TextMate injection grammar (syntaxes/) on sample lines, tokenised by vscode-textmate and vscode-oniguruma
// (VS Code's own engine) over VS Code's Python grammar: each piece gets the scopes themes colour.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import * as oniguruma from 'vscode-oniguruma';
import { INITIAL, Registry, parseRawGrammar, type IGrammar } from 'vscode-textmate';

const REPO = path.resolve(__dirname, '../..');
const INJECTION = path.join(REPO, 'syntaxes', 'strato.injection.tmLanguage.json');
const PYTHON = path.join(REPO, 'test', 'fixtures', 'grammar', 'MagicPython.tmLanguage.json');

let grammar: IGrammar;

before(async () => {
  const wasm = readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (p: string[]) => new oniguruma.OnigScanner(p),
      createOnigString: (s: string) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scope) => {
      const file = scope === 'source.python' ? PYTHON : scope === 'strato.python.injection' ? INJECTION : undefined;
      return file ? parseRawGrammar(readFileSync(file, 'utf8'), file) : null;
    },
    getInjections: (scope) => (scope === 'source.python' ? ['strato.python.injection'] : undefined),
  });
  const g = await registry.loadGrammar('source.python');
  assert.ok(g);
  grammar = g;
});

/** The scopes of the first token that covers `needle` on the last line of `lines`. */
function scopesOf(lines: string[], needle: string): string[] {
  let state = INITIAL;
  let tokens: Array<{ startIndex: number; endIndex: number; scopes: string[] }> = [];
  for (const line of lines) {
    const r = grammar.tokenizeLine(line, state);
    state = r.ruleStack;
    tokens = r.tokens;
  }
  const last = lines[lines.length - 1];
  const at = last.indexOf(needle);
  assert.ok(at >= 0, `${needle} not in ${last}`);
  const t = tokens.find((x) => x.startIndex <= at && at < x.endIndex);
  assert.ok(t);
  return t.scopes;
}

describe('Strato injection grammar', () => {
  it('colours @Endpoint as a decorator and the catalog enums inside it', () => {
    const line = '@Endpoint(name="img", gpu=GpuGroup.ADA_24, workers=(0, 3))';
    assert.ok(scopesOf([line], 'Endpoint').includes('support.class.endpoint.strato'));
    assert.ok(scopesOf([line], 'Endpoint').includes('entity.name.function.decorator.python'));
    assert.ok(scopesOf([line], 'GpuGroup').includes('support.class.catalog.strato'));
    assert.ok(scopesOf([line], 'ADA_24').includes('variable.other.enummember.catalog.strato'));
    // Python's own scopes still apply inside: the string and the keyword argument.
    assert.ok(scopesOf([line], 'img').some((s) => s.startsWith('string.quoted')));
    assert.ok(scopesOf([line], 'workers').includes('variable.parameter.function-call.python'));
  });

  it('colours @<endpoint>.get/post routes, the route string and its parameters', () => {
    const line = '@api.post("/items/{item_id}")';
    assert.ok(scopesOf([line], 'api').includes('variable.other.object.endpoint.strato'));
    assert.ok(scopesOf([line], 'post').includes('support.function.http-method.strato'));
    assert.ok(scopesOf([line], '/items').includes('string.quoted.single.route.strato.python'));
    assert.ok(scopesOf([line], 'item_id').includes('variable.parameter.route.strato'));
    for (const m of ['get', 'put', 'patch', 'delete']) assert.ok(scopesOf([`@svc.${m}('/x')`], m).includes('support.function.http-method.strato'), m);
  });

  it('colours catalog enums anywhere in code, and leaves comments, strings and other decorators alone', () => {
    assert.ok(scopesOf(['CHOICE = CpuInstanceType.CPU3C_2_4'], 'CPU3C_2_4').includes('variable.other.enummember.catalog.strato'));
    assert.ok(!scopesOf(['# GpuGroup.ADA_24 in a comment'], 'ADA_24').includes('variable.other.enummember.catalog.strato'));
    assert.ok(!scopesOf(['x = "GpuType.NVIDIA_H200"'], 'NVIDIA_H200').includes('variable.other.enummember.catalog.strato'));
    assert.ok(!scopesOf(['@app.route("/x")'], 'route').includes('support.function.http-method.strato'));
    // The function after a multi-line decorator is still a Python function.
    const lines = ['@Endpoint(', '    name="a",', '    gpu=GpuType.NVIDIA_H200,', ')', 'def handler(job):'];
    assert.ok(scopesOf(lines.slice(0, 3), 'NVIDIA_H200').includes('variable.other.enummember.catalog.strato'));
    assert.ok(scopesOf(lines, 'handler').includes('entity.name.function.python'));
  });
});
