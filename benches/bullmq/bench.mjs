// The BullMQ side of the queue benchmark (docs/benchmarks.md, "Queue against BullMQ"), the
// same shape as horst's `queue_bench`: `callers` concurrent callers each add a trivial job
// and block until it has finished (QueueEvents), one after another, while `workers`
// in-process workers of 4 slots (concurrency 4) run them. Prints one line:
//   bullmq <workers> worker(s) x 4 slots: <jobs> jobs in <s> s = <n> jobs/s end to end, caller p50 <ms> ms
//
// and the Redis server's own CPU per job over the timed jobs (INFO cpu: the main thread's user
// and system time), which does not depend on how busy the machine is. `--warmup N` jobs run
// first, untimed: node's JIT (and horst's first connections) settle before the clock starts.
//
//   npm ci && node bench.mjs --redis redis://127.0.0.1:PORT --workers 1 --jobs 4000 --callers 32 --warmup 4000
import { Queue, QueueEvents, Worker } from 'bullmq';
import IORedis from 'ioredis';

function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

const url = option('redis', 'redis://127.0.0.1:6379');
const workers = Number(option('workers', '1'));
const jobs = Number(option('jobs', '4000'));
const callers = Number(option('callers', '32'));
const warmup = Number(option('warmup', '0'));
const name = `bench-${process.pid}-${Date.now()}`;
const connection = () => new IORedis(url, { maxRetriesPerRequest: null });

const queue = new Queue(name, { connection: connection() });
const events = new QueueEvents(name, { connection: connection() });
await events.waitUntilReady();
const running = [];
for (let w = 0; w < workers; w++) {
  running.push(new Worker(name, async () => ({}), { connection: connection(), concurrency: 4 }));
}
await Promise.all(running.map((w) => w.waitUntilReady()));

// `count` jobs by `callers` callers, each adding a job and blocking until it has finished.
async function round(count, tag, latencies) {
  const per = Math.floor(count / callers);
  await Promise.all(
    Array.from({ length: callers }, async (_, c) => {
      for (let i = 0; i < per; i++) {
        const t0 = process.hrtime.bigint();
        const job = await queue.add('simulate', { c, i, tag }, { removeOnComplete: false });
        await job.waitUntilFinished(events, 60_000);
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
    }),
  );
  return per * callers;
}

// The server's CPU (s), main thread.
const probe = connection();
async function redisCpu() {
  const info = await probe.info('cpu');
  const num = (k) => Number((info.match(new RegExp(`${k}:([0-9.]+)`)) || [0, 0])[1]);
  return num('used_cpu_user') + num('used_cpu_sys');
}

if (warmup > 0) await round(warmup, 'w', []);
const latencies = [];
const cpu0 = await redisCpu();
const start = process.hrtime.bigint();
const done = await round(jobs, 't', latencies);
const secs = Number(process.hrtime.bigint() - start) / 1e9;
const cpuPerJob = ((await redisCpu()) - cpu0) * 1e6 / done;
latencies.sort((a, b) => a - b);
const p50 = latencies[Math.round((latencies.length - 1) * 0.5)];
console.log(
  `bullmq ${workers} worker(s) x 4 slots: ${done} jobs in ${secs.toFixed(2)} s = ${(done / secs).toFixed(0)} jobs/s end to end, caller p50 ${p50.toFixed(1)} ms, Redis CPU ${cpuPerJob.toFixed(1)} µs a job`,
);
await Promise.all(running.map((w) => w.close()));
await events.close();
await queue.obliterate({ force: true });
await queue.close();
await probe.quit();
process.exit(0);
