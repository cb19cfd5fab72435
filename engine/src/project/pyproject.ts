// pyproject.toml as the project model sees it: the build installs requirements.txt and each endpoint's
// dependencies=[...], never pyproject's own list, so a list there is said where every check shows it.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import type { Diagnostic } from './model';

/**
 * pyproject.toml's `[project] dependencies`, which Strato does not install (requirements.txt and dependencies=[...]
 * are what the build installs, as in the reference product): a warning naming them and where they go, else null.
 */
export function pyprojectDependenciesWarning(root: string): Diagnostic | null {
  let text: string;
  let deps: unknown;
  try {
    text = readFileSync(path.join(root, 'pyproject.toml'), 'utf8');
    deps = (parseToml(text) as { project?: { dependencies?: unknown } }).project?.dependencies;
  } catch {
    return null; // none, or not ours to judge: pip or the user's tools say what is wrong with it
  }
  if (!Array.isArray(deps) || deps.length === 0) return null;
  const line = Math.max(
    0,
    text.split(/\r?\n/).findIndex((l) => /^\s*dependencies\s*=/.test(l)),
  );
  return {
    code: 'pyproject-dependencies',
    severity: 'warning',
    message:
      `pyproject.toml lists dependencies (${deps.join(', ')}), which the build does not install: put those every endpoint needs in ` +
      "requirements.txt, and an endpoint's own in its dependencies=[...]",
    file: 'pyproject.toml',
    range: { start: { line, character: 0 }, end: { line, character: 0 } },
  };
}
