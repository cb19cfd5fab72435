// Ended jobs whose rows are durable, kept for the next `/status` or `/stream` up to a bound on the memory they hold
// (Job.memoryBytes); the least recently used leave first, and a job larger than the whole bound is not kept (the store
// has it).
import type { Job } from './job';

export class EndedJobCache {
  /** Insertion order is recency: the first entry is the least recently used. */
  private readonly jobs = new Map<string, { job: Job; bytes: number }>();
  private held = 0;

  constructor(readonly maxBytes: number) {}

  /** Bytes held (Job.memoryBytes of every job). */
  get bytes(): number {
    return this.held;
  }

  get count(): number {
    return this.jobs.size;
  }

  has(id: string): boolean {
    return this.jobs.has(id);
  }

  get(id: string): Job | undefined {
    const e = this.jobs.get(id);
    if (!e) return undefined;
    this.jobs.delete(id);
    this.jobs.set(id, e);
    return e.job;
  }

  put(job: Job): void {
    this.delete(job.id);
    const bytes = job.memoryBytes();
    if (bytes > this.maxBytes) return;
    this.jobs.set(job.id, { job, bytes });
    this.held += bytes;
    for (const [id, e] of this.jobs) {
      if (this.held <= this.maxBytes) break;
      this.jobs.delete(id);
      this.held -= e.bytes;
    }
  }

  delete(id: string): Job | undefined {
    const e = this.jobs.get(id);
    if (!e) return undefined;
    this.jobs.delete(id);
    this.held -= e.bytes;
    return e.job;
  }

  dropEndpoint(endpointId: string): void {
    for (const e of [...this.jobs.values()]) if (e.job.endpointId === endpointId) this.delete(e.job.id);
  }
}
