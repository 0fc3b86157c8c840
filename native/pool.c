// The native thread pool (see pool.h).
#include "pool.h"
#include <pthread.h>
#include <stdint.h>

static pthread_mutex_t pool_use = PTHREAD_MUTEX_INITIALIZER;  // one job at a time
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER; // guards the fields below
static pthread_cond_t pool_go = PTHREAD_COND_INITIALIZER;
static pthread_cond_t pool_done = PTHREAD_COND_INITIALIZER;
static int pool_started = 0;        // helper threads running
static unsigned long pool_generation = 0;
static int pool_active = 0;         // helpers taking part in this generation
static int pool_pending = 0;        // of those, not finished
static pool_work_fn pool_fn;
static void *pool_job;

static void *pool_helper(void *arg) {
  int id = (int)(intptr_t)arg;
  unsigned long seen = 0;
  pthread_mutex_lock(&pool_lock);
  for (;;) {
    while (pool_generation == seen) pthread_cond_wait(&pool_go, &pool_lock);
    seen = pool_generation;
    if (id >= pool_active) continue;
    pool_work_fn fn = pool_fn;
    void *job = pool_job;
    int count = pool_active + 1;
    pthread_mutex_unlock(&pool_lock);
    fn(job, id + 1, count);
    pthread_mutex_lock(&pool_lock);
    if (--pool_pending == 0) pthread_cond_signal(&pool_done);
  }
  return NULL;
}

// Starts helpers up to `want` (best effort: fewer if the system refuses threads). Called with pool_use held.
static int pool_helpers(int want) {
  while (pool_started < want && pool_started < POOL_MAX_THREADS) {
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    int rc = pthread_create(&t, &attr, pool_helper, (void *)(intptr_t)pool_started);
    pthread_attr_destroy(&attr);
    if (rc != 0) break;
    pool_started++;
  }
  return pool_started < want ? pool_started : want;
}

void pool_run(pool_work_fn fn, void *job, int nthreads) {
  if (nthreads > POOL_MAX_THREADS + 1) nthreads = POOL_MAX_THREADS + 1;
  if (nthreads <= 1 || pthread_mutex_trylock(&pool_use) != 0) {
    fn(job, 0, 1);
    return;
  }
  int helpers = pool_helpers(nthreads - 1);
  pthread_mutex_lock(&pool_lock);
  pool_fn = fn;
  pool_job = job;
  pool_active = helpers;
  pool_pending = helpers;
  pool_generation++;
  pthread_cond_broadcast(&pool_go);
  pthread_mutex_unlock(&pool_lock);
  fn(job, 0, helpers + 1);
  pthread_mutex_lock(&pool_lock);
  while (pool_pending > 0) pthread_cond_wait(&pool_done, &pool_lock);
  pthread_mutex_unlock(&pool_lock);
  pthread_mutex_unlock(&pool_use);
}
