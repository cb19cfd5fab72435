// The generated clients' runtime (engine/src/clientgen/runtime.ts) is copied into users' code, so it restates the
// job types of the wire instead of importing them: this file does not compile (npm run typecheck) when they part.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as Runtime from '../../engine/src/clientgen/runtime';
import type * as Wire from '../../engine/src/protocol/jobs';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

const statusSame: Same<Runtime.JobStatus, Wire.JobStatus> = true;
const jobSame: Same<Runtime.Job<{ n: number }>, Wire.Job<{ n: number }>> = true;
const acceptedFits: Same<Pick<Runtime.Job, 'id' | 'status'>, Wire.JobAccepted> = true;

test("the typed client's job types are the wire's", () => {
  assert.deepEqual([statusSame, jobSame, acceptedFits], [true, true, true]);
});
