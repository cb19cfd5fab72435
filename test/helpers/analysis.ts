// Test helpers for project analysis: analyse source text as a file, or several files as a project.
import { analyzeText, combine, createPythonParser, type Diagnostic, type FileModel, type Parser, type ProjectModel } from '../../engine/src/project';

let parser: Promise<Parser> | undefined;

export async function analyzeSource(text: string, file = 'worker.py', localModules: string[] = []): Promise<FileModel> {
  parser ??= createPythonParser();
  return analyzeText(await parser, file, text, { localModules: new Set(localModules) });
}

export async function analyzeFiles(files: Record<string, string>): Promise<ProjectModel> {
  const models: FileModel[] = [];
  for (const [file, text] of Object.entries(files)) models.push(await analyzeSource(text, file));
  return combine('/project', models);
}

export function codes(diags: readonly Diagnostic[]): string[] {
  return diags.map((d) => d.code);
}

export const HEADER = 'from strato import Endpoint, GpuGroup, GpuType, CpuInstanceType\n';

/** A worker file with one queue endpoint whose decorator takes `args`. */
export const queue = (args: string, body = '    return {}') => `${HEADER}\n@Endpoint(${args})\ndef fn(x: int = 1):\n${body}\n`;

/** The diagnostics of one source file. */
export async function diagnose(src: string): Promise<Diagnostic[]> {
  return (await analyzeSource(src)).diagnostics;
}
