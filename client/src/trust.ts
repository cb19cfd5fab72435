// Workspace Trust, supported in a limited way: in Restricted Mode the language server's validation, hovers and
// completion work, and nothing runs the workspace's code (no dev server, run, debug, build or deploy); the
// commands that would say why, and the Run/Debug/Deploy code lenses become one lens that opens the trust editor.
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { UserError } from '../../engine/src/util';

/** VS Code's own command that opens the Workspace Trust editor. */
export const MANAGE_TRUST_COMMAND = 'workbench.trust.manage';

const RESTRICTED_LENS = '$(shield) Restricted Mode: trust this workspace to run, debug or deploy';
const RESTRICTED_MESSAGE = "Restricted Mode: Strato checks this workspace's code but runs none of it until you trust the workspace.";

/** Throws a UserError saying why when the workspace is not trusted; `what` completes "trust the workspace to ...". */
export function requireTrust(what: string): void {
  if (vscode.workspace.isTrusted) return;
  throw new UserError(
    `Restricted Mode: Strato runs none of this workspace's code until you trust it. To ${what}, trust the workspace (Manage Workspace Trust).`,
  );
}

/** In Restricted Mode each line's lenses become one lens that opens the trust editor. */
export function restrictedLenses(lenses: vscode.CodeLens[] | null | undefined): vscode.CodeLens[] | null | undefined {
  if (vscode.workspace.isTrusted || !lenses) return lenses;
  const lines = new Map<number, vscode.Range>();
  for (const l of lenses) if (!lines.has(l.range.start.line)) lines.set(l.range.start.line, l.range);
  return [...lines.values()].map((range) => new vscode.CodeLens(range, { title: RESTRICTED_LENS, command: MANAGE_TRUST_COMMAND }));
}

/** Once the workspace is trusted, the code lenses are asked for again (they run, debug and deploy from now on). */
export function onTrustGranted(client: () => LanguageClient | undefined): vscode.Disposable {
  return vscode.workspace.onDidGrantWorkspaceTrust(() => {
    const lenses = client()?.getFeature('textDocument/codeLens');
    const doc = vscode.workspace.textDocuments.find((d) => lenses?.getProvider(d));
    if (doc) lenses?.getProvider(doc)?.onDidChangeCodeLensEmitter.fire();
  });
}

/** While the workspace is not trusted, the Endpoints view says why its Run, Debug and Deploy actions are missing. */
export function restrictedNotice(view: vscode.TreeView<unknown>): vscode.Disposable {
  const set = () => (view.message = vscode.workspace.isTrusted ? undefined : RESTRICTED_MESSAGE);
  set();
  return vscode.workspace.onDidGrantWorkspaceTrust(set);
}
