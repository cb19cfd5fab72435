// The SQL of the jobs' group commit (SqlStore.writeJobs): its three statements, named and with typed parameters, so
// that the embedded database plans each once (namedStatements.ts). The rows go as JSON text, one argument per
// statement: on the embedded database binding a parameter per column costs more than the rows themselves.
import type { NamedStatement } from './namedStatements';

/** The columns a job's later changes write (JobStateRow): all but what it was created with. */
const JOB_STATE_COLUMNS = [
  'status',
  'output',
  'error',
  'queued_at',
  'started_at',
  'ended_at',
  'expires_at',
  'ttl_set',
  'retention_ms',
  'attempts',
  'retries',
  'worker_id',
  'stream',
  'stream_output',
];

const STATE_SET = (from: string) => JOB_STATE_COLUMNS.map((c) => `${c} = ${from}.${c}`).join(', ');

/** New jobs; a row that is there already (a commit that failed after all) takes the state, if this node still owns it. */
export const INSERT_JOBS: NamedStatement = {
  name: 'strato_insert_jobs',
  types: ['json'],
  sql:
    `insert into jobs select * from json_populate_recordset(null::jobs, $1) ` +
    `on conflict (id) do update set ${STATE_SET('excluded')} where jobs.owner = excluded.owner`,
};
// The rows to change are looked up by their ids (`= any(array(...))`, an index scan of the primary key). Joined to the
// JSON rows alone, the planner guesses 100 of them and, below about 25,000 rows in the table, a PostgreSQL server read
// all of it for every commit (seen in bench/multinode.ts: 600 sequential scans of `jobs` in one run).
export const UPDATE_JOBS: NamedStatement = {
  name: 'strato_update_jobs',
  types: ['json', 'json', 'text'],
  sql:
    `update jobs j set ${STATE_SET('r')} from json_populate_recordset(null::jobs, $1) r ` +
    `where j.id = any(array(select json_array_elements_text($2))) and j.id = r.id and j.owner = $3`,
};
export const DELETE_JOBS: NamedStatement = {
  name: 'strato_delete_jobs',
  types: ['json', 'text'],
  sql: `delete from jobs where id = any(array(select json_array_elements_text($1))) and owner = $2`,
};
