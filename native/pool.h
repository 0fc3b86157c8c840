// The pool of native threads of imgpu-native.node (pool.c), shared by the copies (copy.c) and the point passes
// (point.c): made once, woken by a condition variable (~10 µs), so a millisecond of work can be split over 16
// threads — which JavaScript worker threads, woken by messages, do not manage as cheaply. One job uses the pool at
// a time; a caller that finds it busy runs its job alone.
#ifndef IMGPU_NATIVE_POOL_H
#define IMGPU_NATIVE_POOL_H

#define POOL_MAX_THREADS 32

// One participant's share of a job: participant `index` of `count` (index 0 is the calling thread).
typedef void (*pool_work_fn)(void *job, int index, int count);

// Runs fn(job, i, count) for i in [0, count) on up to `nthreads` threads, the caller's included; returns when all
// are done. count is 1 (the caller alone) when nthreads <= 1 or the pool is busy with another job.
void pool_run(pool_work_fn fn, void *job, int nthreads);
#endif
