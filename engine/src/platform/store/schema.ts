// The platform's tables. Plain PostgreSQL: the same DDL runs on PGlite and on a PostgreSQL server.
// jobs.endpoint_id has no foreign key on purpose: a group commit must never fail because an endpoint was
// deleted meanwhile; deleting an endpoint deletes its jobs explicitly.
// Times are milliseconds since the epoch (bigint); JSON documents are kept as text so they are stored as sent.
// Columns added after a data dir was first made are added by `alter table ... if not exists` below.

export const SCHEMA_VERSION = '1';

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
create index if not exists jobs_by_endpoint_status on jobs (endpoint_id, status);
create index if not exists jobs_by_expiry on jobs (expires_at) where expires_at is not null;
`;
