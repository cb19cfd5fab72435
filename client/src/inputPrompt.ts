// The input box of Run and Debug: prefilled with the last input given for that function (kept per workspace), else
// the `input` of a test_input.json beside its file or at the project root, else JSON from the parameters.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { EndpointCommandArgs } from '../../engine/src/protocol';
import { UserError } from '../../engine/src/util';
import { Cancelled } from './errors';
import { functionOf, initialInput, parseInput, testInputCandidates } from './inputs';
import type { StratoViews } from './views';

let memory: vscode.Memento | undefined;

/** Where the last inputs are kept (the extension's workspace state). */
export function setInputMemory(m: vscode.Memento): void {
  memory = m;
}

const memoryKey = (a: EndpointCommandArgs) => `strato.lastInput:${a.endpoint}:${a.function}:${a.method ?? ''} ${a.path ?? ''}`;

/** Remembers an input given for a function (a run or debug started with it). */
export function rememberInput(a: EndpointCommandArgs, input: Record<string, unknown>): void {
  void memory?.update(memoryKey(a), input);
}

function readTestInput(root: string, file: string): string | undefined {
  for (const rel of testInputCandidates(file)) {
    try {
      return readFileSync(path.join(root, ...rel.split('/')), 'utf8');
    } catch {
      // not there: the next place
    }
  }
  return undefined;
}

/** Asks for the input of a function; throws Cancelled when the box is dismissed. */
export async function askInput(views: StratoViews, folder: vscode.WorkspaceFolder, a: EndpointCommandArgs): Promise<Record<string, unknown>> {
  const state = views.state().find((s) => s.folder.uri.toString() === folder.uri.toString()) ?? (await views.loadFolder(folder));
  const ep = state.model.endpoints.find((e) => e.name === a.endpoint);
  const first = initialInput(
    memory?.get<Record<string, unknown>>(memoryKey(a)),
    readTestInput(folder.uri.fsPath, a.file),
    ep && functionOf(ep, a.function, a.method, a.path),
  );
  const text = await vscode.window.showInputBox({
    title: a.kind === 'QUEUE' ? `Input of ${a.endpoint} (the "input" object)` : `Body of ${a.method} ${a.path}`,
    value: first.text,
    prompt: `JSON object (prefilled from the ${first.source})`,
    validateInput: (v) => {
      const p = parseInput(v);
      return p.ok ? undefined : p.message;
    },
  });
  if (text === undefined) throw new Cancelled('no input given');
  const p = parseInput(text);
  if (!p.ok) throw new UserError(p.message);
  rememberInput(a, p.value);
  return p.value;
}
