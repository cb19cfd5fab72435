// Numbers given as command-line flags, read one way by every command: digits only. `Number()` alone took "" as 0 (a
// random port), "0x10" as 16 and "1e3" as 1000.
import { UserError } from '../util/errors';

/** A whole-number flag within [min, max]; undefined when the flag was not given. */
export function wholeNumberFlag(flag: string, v: string | undefined, min = 0, max?: number): number | undefined {
  if (v === undefined) return undefined;
  const n = /^\d+$/.test(v) ? Number(v) : NaN;
  if (!(n >= min && (max === undefined || n <= max)))
    throw new UserError(`${flag} must be a whole number ${max === undefined ? `of ${min} or more` : `from ${min} to ${max}`}, got "${v}"`);
  return n;
}

/** A port flag: 1-65535, or 0 for any free port. */
export function portFlag(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = /^\d+$/.test(v) ? Number(v) : NaN;
  if (!(n <= 65535)) throw new UserError(`${flag} must be a port number (1-65535, or 0 for any free port), got "${v}"`);
  return n;
}
