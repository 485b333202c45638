/* lt_parallel.c -- the per-state worker pool and parallel-for (see lt_parallel.h). */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include "lt_parallel.h"

/* ---- the worker pool ------------------------------------------------------
   One piece of work at a time: its chunks are claimed by the caller and the
   woken workers with an atomic counter, so a worker the scheduler wakes late
   simply finds fewer (or no) chunks left and the caller never waits for a
   worker that has not started. */
typedef struct work {
  lt_chunk_fn fn;
  void *ctx;
  int64_t nchunks;
  const volatile sig_atomic_t *stop;   /* the state's interrupt flag, or NULL */
  atomic_llong next;        /* next chunk index */
  int want, joined;         /* workers wanted / that took part (under mu) */
} work_t;

struct lt_pool {
  pthread_mutex_t mu;
  pthread_cond_t wake, done;
  int nthreads;             /* the caller's thread included */
  int nworkers, sleeping, main_waiting;
  atomic_int quit, active;  /* written under mu, polled without it */
  atomic_int busy;          /* a piece of work is running: nested calls run inline */
  _Atomic uint64_t gen;     /* bumped (under mu) per piece of work */
  work_t *w;                /* the current work, NULL between calls */
  const volatile sig_atomic_t *stop;   /* lt_pool_set_interrupt */
  pthread_t th[LT_MAX_THREADS];
};

static void do_chunks(work_t *w) {
  for (;;) {
    int64_t c = atomic_fetch_add_explicit(&w->next, 1, memory_order_relaxed);
    if (c >= w->nchunks) return;
    if (w->stop && *w->stop) {   /* interrupted: the remaining chunks are skipped */
      atomic_store_explicit(&w->next, w->nchunks, memory_order_relaxed);
      return;
    }
    w->fn(w->ctx, c);
  }
}

/* Waking a thread parked in the kernel is slow on a busy machine (as long
   as a whole large elementwise op), so both sides poll for a while first
   (as OpenMP's workers do, which PyTorch's parallel_for runs on): a loop of
   large ops then hands work over without a kernel wake-up.  The poll is
   bounded in time, so an idle state costs nothing once it has passed, and
   yields the core between rounds: with more runnable threads than cores
   the poller may share one with the thread doing the work. */
/* 1 ms: a worker that went to sleep is woken on the caller's CPU (the
   kernel places a wakee beside its waker) and takes no part until the
   scheduler moves it, so on 2 cores a loop of 20-50 us ops with a 100 us
   poll ran on one thread about half the time (bench/README, "threads");
   PyTorch's OpenMP workers poll for a similar time. */
#define SPIN_NS 1000000
static inline void cpu_relax(void) {
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
  __builtin_ia32_pause();
#endif
}
static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
/* polls until gen != old (or quit); returns 1 when it changed */
static int spin_gen(lt_pool *p, uint64_t old) {
  int64_t t0 = now_ns();
  for (;;) {
    for (int i = 0; i < 64; i++) {
      if (atomic_load_explicit(&p->gen, memory_order_acquire) != old || atomic_load(&p->quit)) return 1;
      cpu_relax();
    }
    if (now_ns() - t0 > SPIN_NS) return 0;
    sched_yield();
  }
}
static void spin_idle(lt_pool *p) {
  int64_t t0 = now_ns();
  for (;;) {
    for (int i = 0; i < 64; i++) {
      if (atomic_load_explicit(&p->active, memory_order_acquire) == 0) return;
      cpu_relax();
    }
    if (now_ns() - t0 > SPIN_NS) return;
    sched_yield();
  }
}

static void *worker_main(void *arg) {
  lt_pool *p = (lt_pool *)arg;
  uint64_t seen = 0;
  pthread_mutex_lock(&p->mu);
  for (;;) {
    if (atomic_load(&p->quit)) break;
    if (atomic_load(&p->gen) == seen) {
      pthread_mutex_unlock(&p->mu);
      spin_gen(p, seen);
      pthread_mutex_lock(&p->mu);
      if (!atomic_load(&p->quit) && atomic_load(&p->gen) == seen) {
        p->sleeping++;   /* gen only changes under mu: no wake-up is lost */
        while (!atomic_load(&p->quit) && atomic_load(&p->gen) == seen) pthread_cond_wait(&p->wake, &p->mu);
        p->sleeping--;
      }
      continue;
    }
    seen = atomic_load(&p->gen);
    work_t *w = p->w;
    if (!w || w->joined >= w->want) continue;
    w->joined++;
    atomic_fetch_add(&p->active, 1);
    pthread_mutex_unlock(&p->mu);
    do_chunks(w);
    pthread_mutex_lock(&p->mu);
    if (atomic_fetch_sub(&p->active, 1) == 1 && p->main_waiting) pthread_cond_signal(&p->done);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

static int clamp_threads(int n) { return n < 1 ? 1 : n > LT_MAX_THREADS ? LT_MAX_THREADS : n; }

lt_pool *lt_pool_new(int nthreads) {
  lt_pool *p = (lt_pool *)calloc(1, sizeof *p);
  if (!p) return NULL;
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->wake, NULL);
  pthread_cond_init(&p->done, NULL);
  p->nthreads = clamp_threads(nthreads);
  return p;
}

void lt_pool_free(lt_pool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  atomic_store(&p->quit, 1);
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mu);
  for (int i = 0; i < p->nworkers; i++) pthread_join(p->th[i], NULL);
  pthread_cond_destroy(&p->wake);
  pthread_cond_destroy(&p->done);
  pthread_mutex_destroy(&p->mu);
  free(p);
}

void lt_pool_set_threads(lt_pool *p, int nthreads) {
  if (p) p->nthreads = clamp_threads(nthreads);
}

int lt_pool_threads(const lt_pool *p) { return p ? p->nthreads : 1; }

void lt_pool_set_interrupt(lt_pool *p, const volatile sig_atomic_t *flag) {
  if (p) p->stop = flag;
}

void lt_pool_run(lt_pool *p, int nt, int64_t nchunks, lt_chunk_fn fn, void *ctx) {
  if (nchunks <= 0) return;
  if (nt > lt_pool_threads(p)) nt = lt_pool_threads(p);
  if (nt > nchunks) nt = (int)nchunks;
  const volatile sig_atomic_t *stop = p ? p->stop : NULL;
  if (nt <= 1 || atomic_exchange(&p->busy, 1)) {   /* one thread, or nested: inline */
    for (int64_t c = 0; c < nchunks && !(stop && *stop); c++) fn(ctx, c);
    return;
  }
  work_t w;
  w.fn = fn;
  w.ctx = ctx;
  w.nchunks = nchunks;
  w.stop = stop;
  atomic_init(&w.next, 0);
  w.joined = 0;
  pthread_mutex_lock(&p->mu);
  if (p->nworkers < nt - 1) {
    /* workers take no signals: a host's handler (Ctrl-C) runs on its own
       threads, where it may touch its lua_State */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    while (p->nworkers < nt - 1) {
      if (pthread_create(&p->th[p->nworkers], NULL, worker_main, p) != 0) break;
      p->nworkers++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
  }
  w.want = nt - 1 < p->nworkers ? nt - 1 : p->nworkers;
  p->w = &w;
  atomic_fetch_add_explicit(&p->gen, 1, memory_order_release);
  if (w.want > 0 && p->sleeping > 0) pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mu);
  do_chunks(&w);
  pthread_mutex_lock(&p->mu);
  p->w = NULL;   /* late wakers find nothing; w leaves scope once active is 0 */
  while (atomic_load(&p->active) > 0) {
    pthread_mutex_unlock(&p->mu);
    spin_idle(p);
    pthread_mutex_lock(&p->mu);
    if (atomic_load(&p->active) == 0) break;
    p->main_waiting = 1;
    while (atomic_load(&p->active) > 0) pthread_cond_wait(&p->done, &p->mu);
    p->main_waiting = 0;
  }
  pthread_mutex_unlock(&p->mu);
  atomic_store(&p->busy, 0);
}

/* ---- parallel-for over fixed ranges ---------------------------------------- */
int lt_parallel_parts(const lt_pool *p, int64_t work, int64_t grain, int64_t units) {
  int64_t nt = lt_pool_threads(p);
  if (grain < 1) grain = 1;
  if (work / grain < nt) nt = work / grain;
  if (units < nt) nt = units;
  return nt < 1 ? 1 : (int)nt;
}

typedef struct ranges { lt_range_fn fn; void *ctx; int64_t n; int parts; } ranges;
static void range_chunk(void *v, int64_t c) {
  ranges *r = (ranges *)v;
  r->fn(r->ctx, r->n * c / r->parts, r->n * (c + 1) / r->parts, (int)c);
}

void lt_parallel_run(lt_pool *p, int parts, int64_t n, lt_range_fn fn, void *ctx) {
  if (parts <= 1 || n <= 1) { fn(ctx, 0, n, 0); return; }
  ranges r = {fn, ctx, n, parts};
  lt_pool_run(p, parts, parts, range_chunk, &r);
}

void lt_parallel_for(lt_pool *p, int64_t n, int64_t grain, lt_range_fn fn, void *ctx) {
  lt_parallel_run(p, lt_parallel_parts(p, n, grain, n), n, fn, ctx);
}
