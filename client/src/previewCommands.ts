// Stop Deploy Preview: the preview this window started in its terminal (Ctrl+C there), or a preview started elsewhere
// (a terminal of the user's own, another window), of the project the preview's item in the Environments view names or,
// from the palette, of the one project of the window whose preview runs: it gets SIGINT, on which
// `strato deploy --preview` removes its containers and network and exits, as after Ctrl+C.
import * as path from 'node:path';
import { readPreviewState } from '../../engine/src/preview/state';
import { UserError } from '../../engine/src/util';
import { folderHintOf } from './commandArgs';
import type { DevTerminal } from './devTerminal';
import type { StratoViews } from './views';

const STOP_WAIT_MS = 30_000;

/** Resolves true once the preview has stopped (its state file no longer names a running preview). */
export async function stopPreview(views: StratoViews, terminal: DevTerminal, arg: unknown): Promise<boolean> {
  const hint = folderHintOf(arg);
  // An item names its project: the terminal's preview of another project keeps running.
  if (terminal.running && (!hint || terminal.runsFor(hint))) return terminal.stop();
  const root = hint ?? runningPreviewRoot(views);
  const state = root ? readPreviewState(root) : null;
  if (!root || !state) throw new UserError(`no preview of ${root ? path.basename(root) : 'this project'} is running: start one with "Strato: Deploy Preview".`);
  process.kill(state.pid, 'SIGINT');
  const until = Date.now() + STOP_WAIT_MS;
  while (readPreviewState(root) && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
  views.refreshSoon(0);
  if (readPreviewState(root)) throw new UserError(`the preview (pid ${state.pid}) did not stop within ${STOP_WAIT_MS / 1000} s of SIGINT.`);
  return true;
}

/** The project whose preview runs, when the command names none (the palette); several running: the user picks in the view. */
function runningPreviewRoot(views: StratoViews): string | undefined {
  const running = views
    .state()
    .map((f) => f.model.root)
    .filter((root) => readPreviewState(root));
  if (running.length > 1) throw new UserError(`previews of ${running.length} projects are running: stop one from its item in the Environments view.`);
  return running[0];
}
