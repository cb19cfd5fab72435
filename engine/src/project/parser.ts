// Loads web-tree-sitter and the tree-sitter-python grammar (both WebAssembly) once per process.
// The .wasm files sit beside the bundle in dist/, or come from node_modules when running from source.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Language, Parser } from 'web-tree-sitter';
import { applyWasmTier } from '../util/wasmTier';

export type { Edit, Node as SyntaxNode, Point, Tree, TreeCursor } from 'web-tree-sitter';
export { Parser };

let loading: Promise<Language> | undefined;

function locate(file: string, moduleId: string): string {
  const beside = path.join(__dirname, file);
  if (existsSync(beside)) return beside;
  return require.resolve(moduleId);
}

/** The Python language, loaded once. */
export function loadPython(): Promise<Language> {
  loading ??= (async () => {
    applyWasmTier();
    const runtimeWasm = locate('tree-sitter.wasm', 'web-tree-sitter/tree-sitter.wasm');
    await Parser.init({ locateFile: () => runtimeWasm });
    return Language.load(locate('tree-sitter-python.wasm', 'tree-sitter-python/tree-sitter-python.wasm'));
  })();
  return loading;
}

/** A new parser for Python. Parsers are cheap; keep one per long-lived user (e.g. the language server). */
export async function createPythonParser(): Promise<Parser> {
  const language = await loadPython();
  const parser = new Parser();
  parser.setLanguage(language);
  return parser;
}
