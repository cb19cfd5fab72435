// Jobs as the jobs API of a queue-based endpoint answers them (/run, /runsync, /status, /cancel; docs/platform.md):
// the platform stores them with these states, the API client and the CLI read them. The generated clients' runtime
// (clientgen/runtime.ts) is copied into users' code and cannot import this: test/clientgen/wireTypes.test.ts holds the
// two equal.

export type JobStatus = 'IN_QUEUE' | 'IN_PROGRESS' | 'COMPLETED' | 'FAILED' | 'CANCELLED' | 'TIMED_OUT';

export interface Job<Output = unknown> {
  id: string;
  status: JobStatus;
  /** Present once the job completed. */
  output?: Output;
  /** Present on a failed job: the error the function raised. */
  error?: string;
  /** ms in the queue (present once started). */
  delayTime?: number;
  /** ms executing (present once ended). */
  executionTime?: number;
}

export interface JobAccepted {
  id: string;
  status: JobStatus;
}
