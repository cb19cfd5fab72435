// How a long-running command (dev, preview, platform serve, platform agent) is asked to stop: Ctrl+C, a kill, or
// the hang-up of the terminal it runs in (an editor's terminal closed, or its window reloaded). Each cleans up what it
// made (live endpoints, containers, workers) on any of them; without a handler a hang-up ended the process at once.
export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * Calls `stop` with the signal's name on the first stop signal, and again on each Ctrl+C after it (a command exits at
 * once on a second Ctrl+C: the user insists); returns what removes the handlers. A repeated hang-up or kill is not the
 * user insisting — a closing editor window hangs its terminal up, and the process group gets it too — so it does not
 * cut the cleanup short.
 */
export function onStopSignal(stop: (signal: NodeJS.Signals) => void): () => void {
  let stopping = false;
  const on = (signal: NodeJS.Signals) => {
    // The terminal is gone: writing to it fails (EIO, EPIPE), which must not end the cleanup half done.
    if (signal === 'SIGHUP') for (const s of [process.stdout, process.stderr]) s.on('error', () => undefined);
    if (stopping && signal !== 'SIGINT') return;
    stopping = true;
    stop(signal);
  };
  for (const s of STOP_SIGNALS) process.on(s, on);
  return () => {
    for (const s of STOP_SIGNALS) process.off(s, on);
  };
}
