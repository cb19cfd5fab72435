// Writes the client of a deployed environment to a folder, as `<app>-<environment>.ts` (TypeScript) or
// `<app>-<environment>.openapi.json`, or to a file its user names. What the CLI's `strato client` and the extension's
// command both call.
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { EnvironmentSummary } from '../deploy/environments';
import type { ProjectModel } from '../project/model';
import { UserError } from '../util/errors';
import { environmentOpenApiDocument } from './openapi';
import { typescriptClient } from './typescript';

export const CLIENT_LANGUAGES = ['ts', 'openapi'] as const;
export type ClientLanguage = (typeof CLIENT_LANGUAGES)[number];

export interface WrittenClient {
  file: string;
  /** Queue-based functions and load-balanced routes the client calls. */
  functions: number;
  routes: number;
  /** One line each: types left unknown, code and environment out of step. Never a failure. */
  warnings: string[];
}

export function clientFileName(env: Pick<EnvironmentSummary, 'app' | 'environment'>, lang: ClientLanguage): string {
  return `${env.app}-${env.environment}${lang === 'ts' ? '.ts' : '.openapi.json'}`;
}

/** What a file of each language's client ends in, when it is named by its user. */
const EXTENSION: Record<ClientLanguage, string> = { ts: '.ts', openapi: '.json' };
/** Extensions that name a file, not a folder, when --out gives one of them (any other name with a dot may be a folder's). */
const FILE_EXTENSIONS = /^\.(ya?ml|[cm]?js|jsx|tsx|py|txt|md|html?)$/i;

/**
 * Where `--out` says to write: the file itself when it names one of the language's (`src/api.ts`; `api.json` for
 * openapi) and is no folder, else the folder the file is written in (named by clientFileName).
 */
export function clientOut(out: string, lang: ClientLanguage): { dir: string } | { file: string } {
  const st = existsSync(out) ? statSync(out) : undefined;
  if (st?.isDirectory()) return { dir: out };
  const what = lang === 'ts' ? 'TypeScript client' : 'OpenAPI document';
  // A name with a file's extension is a file's (it made a folder named api.yaml); only this language's is written.
  const ext = path.extname(out);
  if (ext.toLowerCase() === EXTENSION[lang]) return { file: out };
  if (FILE_EXTENSIONS.test(ext) || Object.values(EXTENSION).includes(ext.toLowerCase())) {
    const other = (Object.keys(EXTENSION) as ClientLanguage[]).find((l) => l !== lang && ext.toLowerCase() === EXTENSION[l]);
    throw new UserError(
      `--out ${out} names a ${ext} file, and the ${what} is a ${EXTENSION[lang]} one${lang === 'openapi' && /^\.ya?ml$/i.test(ext) ? ' (JSON, which YAML tools read too)' : ''}: ` +
        `write it to ${out.slice(0, -ext.length)}${EXTENSION[lang]}${other ? `, or pass --lang ${other}` : ', or name a folder'}`,
    );
  }
  if (st) throw new UserError(`--out ${out} is a file: name a folder, or a ${EXTENSION[lang]} file for the ${what}`);
  return { dir: out };
}

/** `out` is a folder (the file is named by clientFileName) or the file itself. */
export async function writeClient(
  model: ProjectModel,
  env: EnvironmentSummary,
  lang: ClientLanguage,
  out: { dir: string } | { file: string },
): Promise<WrittenClient> {
  let text: string;
  let warnings: string[];
  if (lang === 'ts') {
    const r = await typescriptClient(model, env);
    text = r.text;
    warnings = r.surface.warnings;
  } else {
    const r = environmentOpenApiDocument(model, env);
    text = `${JSON.stringify(r.document, null, 2)}\n`;
    warnings = r.warnings;
  }
  const errors = model.diagnostics.filter((d) => d.severity === 'error').length;
  if (errors) warnings.unshift(`the code has ${errors} error(s) (strato check lists them): the types follow what could be read.`);
  const file = 'file' in out ? path.resolve(out.file) : path.resolve(out.dir, clientFileName(env, lang));
  try {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
  } catch (e) {
    throw new UserError(
      `could not write the client to ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): choose another folder with --out.`,
    );
  }
  return {
    file,
    functions: env.endpoints.filter((e) => e.type === 'QUEUE').length,
    routes: env.endpoints.reduce((n, e) => n + (e.type === 'QUEUE' ? 0 : e.routes.length), 0),
    warnings,
  };
}
