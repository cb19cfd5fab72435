// Preload (`node --import ./loadLog.mjs`) that records every ES module the process loads into STRATO_LOAD_LOG,
// one URL a line: the start-up test reads it to see which parts of the CLI a command pulled in.
import { register } from 'node:module';

register(
  'data:text/javascript,' +
    encodeURIComponent(`
import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  if (process.env.STRATO_LOAD_LOG && url.startsWith('file:')) appendFileSync(process.env.STRATO_LOAD_LOG, url + '\\n');
  return next(url, context);
}
`),
);
