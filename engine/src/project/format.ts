// Diagnostics as text for terminals: `file:line:col: severity: message [code]`, 1-based like compilers print.
import type { Diagnostic } from './model';

export function formatDiagnostic(d: Diagnostic): string {
  return `${d.file}:${d.range.start.line + 1}:${d.range.start.character + 1}: ${d.severity}: ${d.message} [${d.code}]`;
}
