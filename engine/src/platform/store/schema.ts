// The platform's tables. Plain PostgreSQL: the same DDL runs on PGlite and on a PostgreSQL server.
// jobs.endpoint_id has no foreign key on purpose: a group commit must never fail because an endpoint was
// deleted meanwhile; deleting an endpoint deletes its jobs explicitly.
// Times are milliseconds since the epoch (bigint); JSON documents are kept as text so they are stored as sent.
// Migrations: every statement is idempotent (`if not exists`) and runs at each start, so a data dir of an older
// version gains what was added since. Version 2 added api_keys and audit_log (per-person keys, issue 16);
// version 3 the nodes of a cluster, the owner of each job and build archives kept in the database (issue 11); version 4
// the worker slots that bound an endpoint's workers for the whole service (issue 11); version 6 the claim of the node
// receiving an upload's PUT.
// Columns added later to an existing table are added by `alter table ... if not exists` below.

export const SCHEMA_VERSION = '6';

export const schemaSql = `
create table if not exists meta (
  key text primary key,
  value text not null
);
create table if not exists apps (
  id text primary key,
  name text not null unique,
  created_at bigint not null
);
create table if not exists environments (
  id text primary key,
  app_id text not null references apps(id) on delete cascade,
  name text not null,
  active_build_id text,
  created_at bigint not null,
  unique (app_id, name)
);
create table if not exists builds (
  id text primary key,
  app_id text not null references apps(id) on delete cascade,
  created_at bigint not null,
  size bigint not null,
  sha256 text not null,
  manifest text not null
);
create table if not exists endpoints (
  id text primary key,
  app_id text not null references apps(id) on delete cascade,
  environment_id text not null references environments(id) on delete cascade,
  name text not null,
  build_id text not null,
  config text not null,
  created_at bigint not null,
  updated_at bigint not null,
  unique (environment_id, name)
);
create table if not exists jobs (
  id text primary key,
  endpoint_id text not null,
  kind text not null,
  status text not null,
  input text not null,
  output text,
  error text,
  created_at bigint not null,
  queued_at bigint not null,
  started_at bigint,
  ended_at bigint,
  expires_at bigint,
  ttl_set boolean not null default false,
  retention_ms bigint not null,
  attempts integer not null default 0,
  retries integer not null default 0,
  worker_id text
);
-- What /stream has still to hand out of an ended job: its chunks as one JSON array, and whether its output is its one
-- chunk (a handler that does not stream; the chunk is made from the output when it is read).
alter table jobs add column if not exists stream text;
alter table jobs add column if not exists stream_output boolean not null default false;
-- The node that answers for a job and runs it (its instance id; 'u1' on the embedded database). A node writes only
-- the rows it owns, so a node taken for lost cannot overwrite what the node that adopted its jobs recorded.
alter table jobs add column if not exists owner text not null default 'u1';
create index if not exists jobs_by_endpoint_status on jobs (endpoint_id, status);
create index if not exists jobs_live_by_owner on jobs (owner, queued_at) where status in ('IN_QUEUE', 'IN_PROGRESS');
create index if not exists jobs_by_expiry on jobs (expires_at) where expires_at is not null;
create table if not exists api_keys (
  id text primary key,
  name text not null,
  hash text not null unique,
  prefix text not null,
  scope text not null,
  apps text not null,
  created_at bigint not null,
  created_by text not null,
  last_used_at bigint,
  revoked_at bigint,
  revoked_by text
);
create unique index if not exists api_keys_active_name on api_keys (name) where revoked_at is null;
create table if not exists audit_log (
  seq bigserial primary key,
  at bigint not null,
  key_id text not null,
  key_name text not null,
  operation text not null,
  outcome text not null,
  app text,
  target_type text not null,
  target_id text,
  target_name text,
  detail text
);
create index if not exists audit_log_by_app on audit_log (app, seq);
-- Platform nodes sharing a PostgreSQL server: where each is reached and when it last said it was alive (the
-- database's clock, so that nodes' clocks need not agree).
create table if not exists nodes (
  id text primary key,
  url text not null,
  started_at bigint not null,
  heartbeat_at bigint not null
);
-- The bound the node was started with (--node-lost-ms): others never take it for lost sooner (nodeStatements.ts aliveSql).
alter table nodes add column if not exists lost_ms bigint not null default 0;
-- Uploaded build archives, in pieces, so that every node of a cluster can unpack a build it did not receive. Written
-- before the build's row (no foreign key), deleted with the build's app.
create table if not exists build_archives (
  build_id text not null,
  seq integer not null,
  data bytea not null,
  primary key (build_id, seq)
);
-- Upload locations (clusters): the PUT and the finalize may reach other nodes than the one that gave the location;
-- the received archive waits in build_archives under the upload's id until its build is made.
create table if not exists uploads (
  id text primary key,
  app_id text not null,
  size bigint not null,
  expires_at bigint not null,
  sha256 text
);
-- The node receiving a PUT to the upload now: one PUT at a time in the whole service (two bodies would mix their
-- pieces); the claim is void once that node is lost (version 6).
alter table uploads add column if not exists receiving_node text;
-- Worker slots: a worker of an endpoint holds one of the endpoint's workers.max slots (0 .. max-1) for the whole
-- service, claimed before its process starts and released once it is gone (workers/slots.ts). The primary key is the
-- bound: two nodes never hold one slot. Slots below workers.min are the minimum's workers, which never stop idle.
create table if not exists worker_slots (
  endpoint_id text not null,
  slot integer not null,
  node_id text not null,
  worker_id text not null,
  primary key (endpoint_id, slot)
);
create index if not exists worker_slots_by_node on worker_slots (node_id);
`;
