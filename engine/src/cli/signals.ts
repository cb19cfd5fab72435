// How a long-running command (dev, preview, platform serve, platform agent) is asked to stop: Ctrl+C, a kill, or
// the hang-up of the terminal it runs in (an editor's terminal closed, or its window reloaded). Each cleans up what it
// made (live endpoints, containers, workers) on any of them; without a handler a hang-up ended the process at once.
export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** Calls `stop` with the signal's name on each stop signal; returns what removes the handlers. */
export function onStopSignal(stop: (signal: NodeJS.Signals) => void): () => void {
  const on = (signal: NodeJS.Signals) => {
    // The terminal is gone: writing to it fails (EIO, EPIPE), which must not end the cleanup half done.
    if (signal === 'SIGHUP') for (const s of [process.stdout, process.stderr]) s.on('error', () => undefined);
    stop(signal);
  };
  for (const s of STOP_SIGNALS) process.on(s, on);
  return () => {
    for (const s of STOP_SIGNALS) process.off(s, on);
  };
}
