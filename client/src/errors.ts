// Errors reach the user as one readable message: the engine's UserError texts are written for users already;
// anything else is prefixed so that it is clear where it came from. Every failure is also logged (with its stack
// when it is not a UserError). A cancelled pick or input box is not a failure: it ends the command quietly.
import * as vscode from 'vscode';

let log: vscode.LogOutputChannel | undefined;
export function setErrorLog(channel: vscode.LogOutputChannel): void {
  log = channel;
}

/** The user dismissed a quick pick, an input box or a dialog: the command stops, and nothing is reported. */
export class Cancelled extends Error {
  constructor(what: string) {
    super(what);
    this.name = 'Cancelled';
  }
}

// Not instanceof: the heavy bundle (heavy.ts) carries its own copy of the engine's classes.
/** The engine's UserError and its subclasses (jobs API, control plane, routes, a refused build): they carry `preformatted`. */
export const isUserError = (e: unknown) => e instanceof Error && 'preformatted' in e;
export const isCancelled = (e: unknown) => e instanceof Error && e.name === 'Cancelled';

export function messageOf(e: unknown): string {
  if (isUserError(e)) return (e as Error).message;
  const text = e instanceof Error ? e.message || e.name : String(e);
  return `Strato: ${text || 'unexpected error (see the Strato output)'}`;
}

/** How each command run ended, newest last (the last 200): what the tests read to see a click reach its command. */
export interface CommandOutcome {
  what: string;
  outcome: 'ok' | 'cancelled' | 'failed';
  message?: string;
}
const outcomes: CommandOutcome[] = [];
function record(o: CommandOutcome): void {
  outcomes.push(o);
  if (outcomes.length > 200) outcomes.shift();
}
export const commandOutcomes = (): readonly CommandOutcome[] => outcomes;

/** Runs a command body and shows its failure as one error message; returns undefined on failure or cancel. */
export async function guarded<T>(what: string, run: () => Promise<T>): Promise<T | undefined> {
  try {
    const r = await run();
    record({ what, outcome: 'ok' });
    return r;
  } catch (e) {
    if (isCancelled(e)) {
      log?.info(`${what} cancelled: ${(e as Error).message}`);
      record({ what, outcome: 'cancelled', message: (e as Error).message });
      return undefined;
    }
    const msg = messageOf(e);
    log?.error(`${what} failed: ${msg}${isUserError(e) || !(e instanceof Error) ? '' : `\n${e.stack}`}`);
    console.error(`strato: ${what} failed: ${msg}`);
    record({ what, outcome: 'failed', message: msg });
    void vscode.window.showErrorMessage(msg);
    return undefined;
  }
}

/** The extension's log channel (what it did and what failed), for the modules that write to it. */
export function extensionLog(): vscode.LogOutputChannel | undefined {
  return log;
}
