// Errors reach the user as one readable message: the engine's UserError texts are written for users already;
// anything else is prefixed so that it is clear where it came from. Every failure is also logged.
import * as vscode from 'vscode';
import { UserError } from '../../engine/src/util';

let log: vscode.OutputChannel | undefined;
export function setErrorLog(channel: vscode.OutputChannel): void {
  log = channel;
}

export function messageOf(e: unknown): string {
  if (e instanceof UserError) return e.message;
  return `Strato: ${e instanceof Error ? e.message : String(e)}`;
}

/** Runs a command body and shows its failure as one error message; returns undefined on failure. */
export async function guarded<T>(what: string, run: () => Promise<T>): Promise<T | undefined> {
  try {
    return await run();
  } catch (e) {
    const msg = messageOf(e);
    log?.appendLine(`[${new Date().toISOString()}] ${what} failed: ${msg}${e instanceof UserError || !(e instanceof Error) ? '' : `\n${e.stack}`}`);
    console.error(`strato: ${what} failed: ${msg}`);
    void vscode.window.showErrorMessage(msg);
    return undefined;
  }
}
