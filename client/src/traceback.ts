// A worker's traceback made clickable: the frames of the project's own files point at the workspace copy
// (`File /abs/path.py:12, in fn`: the Output view links `path:line` under a workspace folder). The worker ran an
// unpacked build elsewhere (the platform's data dir, a container), so a frame's path is matched to the project by
// its longest suffix that names a project file. Pure, given the file test.
import path from 'node:path';
import { logMessage, type WorkerLogLine } from '../../engine/src/protocol';

const FRAME = /^(\s*)File "([^"]+)", line (\d+)(.*)$/;
/** Installed packages and the interpreter's own library are never the project's files. */
const NOT_PROJECT = /[\\/](site-packages|dist-packages|deps|lib[\\/]python[\d.]*)[\\/]/;

/** Finds the project file a worker's path is a copy of: the longest suffix of it that exists under `root`. */
export function projectLocator(root: string, isFile: (absPath: string) => boolean): (workerPath: string) => string | undefined {
  return (workerPath) => {
    if (NOT_PROJECT.test(workerPath)) return undefined;
    const parts = workerPath.split(/[\\/]+/).filter(Boolean);
    for (let i = 0; i < parts.length; i++) {
      const candidate = path.join(root, ...parts.slice(i));
      if (isFile(candidate)) return candidate;
    }
    return undefined;
  };
}

/** The lines with each frame of a project file rewritten to `File <project path>:<line>, in fn`; others unchanged. */
export function linkTraceback(lines: readonly string[], locate: (workerPath: string) => string | undefined): string[] {
  return lines.map((line) => {
    const m = FRAME.exec(line);
    const local = m && locate(m[2]);
    return m && local ? `${m[1]}File ${local}:${m[3]}${m[4]}` : line;
  });
}

/** The last traceback an endpoint's workers logged (error lines of one worker from `Traceback`) since `sinceMs`. */
export function lastTraceback(lines: readonly WorkerLogLine[], sinceMs: number): WorkerLogLine[] {
  const recent = lines.filter((l) => l.level === 'error' && Date.parse(l.time) >= sinceMs - 1000);
  let start = recent.length - 1;
  while (start >= 0 && !logMessage(recent[start].text).startsWith('Traceback')) start--;
  if (start < 0) return [];
  return recent.slice(start).filter((l) => l.worker === recent[start].worker);
}
