/* lt_iter.c -- the elementwise iteration engine (see lt_iter.h). */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "lt_iter.h"

int lt_broadcast_shape(const lt_tensor *const *ts, int n, int *ndim, int64_t *shape,
                       int64_t *bad_a, int64_t *bad_b, int *bad_dim) {
  int nd = 0;
  for (int k = 0; k < n; k++) {
    const lt_tensor *t = ts[k];
    int rd = t->ndim > nd ? t->ndim : nd;
    int64_t out[LT_MAX_DIMS];
    for (int i = rd - 1; i >= 0; i--) {
      int ia = i - (rd - nd), ib = i - (rd - t->ndim);
      int64_t sa = ia >= 0 ? shape[ia] : 1, sb = ib >= 0 ? t->shape[ib] : 1;
      if (sa != sb && sa != 1 && sb != 1) {
        *bad_a = sa;
        *bad_b = sb;
        *bad_dim = i + 1;
        return -1;
      }
      out[i] = sa == 1 ? sb : sa;
    }
    memcpy(shape, out, sizeof(int64_t) * (size_t)rd);
    nd = rd;
  }
  *ndim = nd;
  return 0;
}

/* Strides (elements, 0 where broadcast) of t seen with the full shape. */
static void bcast_strides(const lt_tensor *t, int ndim, const int64_t *shape, int64_t *st) {
  int off = ndim - t->ndim;
  for (int i = 0; i < ndim; i++) {
    int j = i - off;
    st[i] = (j < 0 || (t->shape[j] == 1 && shape[i] != 1)) ? 0 : t->stride[j];
  }
}

/* PyTorch's reorder_dimensions: perm[0] is the fastest-moving dim.  An
   insertion sort with an ambiguous comparison: broadcast (stride 0) dims of
   an operand say nothing, equal strides put the smaller size first. */
static void compute_perm(int nops, int64_t st[][LT_MAX_DIMS], int ndim, const int64_t *shape, int *perm) {
  for (int i = 0; i < ndim; i++) perm[i] = ndim - 1 - i;
  for (int i = 1; i < ndim; i++) {
    int d1 = i;
    for (int d0 = i - 1; d0 >= 0; d0--) {
      int cmp = 0, a = perm[d0], b = perm[d1];
      for (int k = 0; k < nops; k++) {
        int64_t s0 = st[k][a], s1 = st[k][b];
        if (s0 == 0 || s1 == 0) continue;
        if (s0 < s1) { cmp = -1; break; }
        if (s0 > s1) { cmp = 1; break; }
        if (shape[a] > shape[b]) { cmp = 1; break; }
      }
      if (cmp > 0) {
        perm[d0] = b;
        perm[d1] = a;
        d1 = d0;
      } else if (cmp < 0) {
        break;
      }
    }
  }
}

void lt_iter_out_strides(const lt_tensor *const *ins, int nin, int ndim, const int64_t *shape,
                         int64_t *stride) {
  int64_t st[LT_ITER_MAX_OPS][LT_MAX_DIMS];
  int perm[LT_MAX_DIMS];
  if (nin > LT_ITER_MAX_OPS) nin = LT_ITER_MAX_OPS;
  for (int k = 0; k < nin; k++) bcast_strides(ins[k], ndim, shape, st[k]);
  compute_perm(nin, st, ndim, shape, perm);
  int64_t s = 1;
  for (int k = 0; k < ndim; k++) {
    int d = perm[k];
    stride[d] = s;
    s *= shape[d] > 1 ? shape[d] : 1;
  }
}

void lt_iter_init(lt_iter *it, const lt_tensor *const *ops, int nout, int nin,
                  const ltensor_dtype *kdt, int ndim, const int64_t *shape, int num_threads) {
  int nops = nout + nin;
  int64_t st[LT_ITER_MAX_OPS][LT_MAX_DIMS];
  int perm[LT_MAX_DIMS];
  it->nops = nops;
  it->nout = nout;
  it->needs_cast = 0;
  it->num_threads = num_threads > 0 ? num_threads : 1;
  it->grain = LT_ITER_GRAIN_CHEAP;
  it->pool = NULL;
  for (int k = 0; k < nops; k++) {
    const lt_tensor *t = ops[k];
    bcast_strides(t, ndim, shape, st[k]);
    size_t sz = lt_itemsize(t->dtype);
    for (int i = 0; i < ndim; i++) st[k][i] *= (int64_t)sz;
    it->data[k] = lt_data(t);
    it->dtype[k] = t->dtype;
    it->kdtype[k] = kdt[k];
    if (t->dtype != kdt[k]) it->needs_cast = 1;
  }
  compute_perm(nops, st, ndim, shape, perm);
  int64_t sh[LT_MAX_DIMS];
  for (int i = 0; i < ndim; i++) {
    sh[i] = shape[perm[i]];
    for (int k = 0; k < nops; k++) it->strides[k][i] = st[k][perm[i]];
  }
  /* coalesce adjacent dims that step through memory as one */
  int prev = 0;
  for (int d = 1; d < ndim; d++) {
    int ok = sh[prev] == 1 || sh[d] == 1;
    if (!ok) {
      ok = 1;
      for (int k = 0; k < nops; k++)
        if (it->strides[k][prev] * sh[prev] != it->strides[k][d]) { ok = 0; break; }
    }
    if (ok) {
      if (sh[prev] == 1)
        for (int k = 0; k < nops; k++) it->strides[k][prev] = it->strides[k][d];
      sh[prev] *= sh[d];
    } else {
      prev++;
      if (prev != d) {
        for (int k = 0; k < nops; k++) it->strides[k][prev] = it->strides[k][d];
        sh[prev] = sh[d];
      }
    }
  }
  if (ndim == 0) {
    sh[0] = 1;
    for (int k = 0; k < nops; k++) it->strides[k][0] = 0;
    prev = 0;
  }
  it->ndim = prev + 1;
  it->numel = 1;
  for (int i = 0; i < it->ndim; i++) {
    it->shape[i] = sh[i];
    it->numel *= sh[i];
  }
}

/* ---- running ----------------------------------------------------------- */
#define CHUNK 256

/* One run of n elements at ptr with innermost strides s0, casting operands
   whose storage dtype differs from the loop's through stack buffers. */
static void run_cast(const lt_iter *it, char **ptr, const int64_t *s0, int64_t n, lt_loop_fn fn, void *ctx) {
  _Alignas(64) char buf[LT_ITER_MAX_OPS][CHUNK * 16];
  char *p[LT_ITER_MAX_OPS];
  int64_t st[LT_ITER_MAX_OPS];
  for (int64_t off = 0; off < n; off += CHUNK) {
    int64_t m = n - off < CHUNK ? n - off : CHUNK;
    for (int k = 0; k < it->nops; k++) {
      char *src = ptr[k] + off * s0[k];
      if (it->dtype[k] == it->kdtype[k]) { p[k] = src; st[k] = s0[k]; continue; }
      int64_t ksz = (int64_t)lt_itemsize(it->kdtype[k]);
      p[k] = buf[k];
      st[k] = ksz;
      if (k >= it->nout) lt_cast_kernel(it->dtype[k], it->kdtype[k])(src, s0[k], buf[k], ksz, m);
    }
    fn(p, st, m, ctx);
    for (int k = 0; k < it->nout; k++)
      if (it->dtype[k] != it->kdtype[k])
        lt_cast_kernel(it->kdtype[k], it->dtype[k])(buf[k], st[k], ptr[k] + off * s0[k], s0[k], m);
  }
}

static void run_range(const lt_iter *it, int64_t start, int64_t end, lt_loop_fn fn, void *ctx) {
  int nd = it->ndim, nops = it->nops;
  int64_t idx[LT_MAX_DIMS];
  int64_t rest = start / it->shape[0];
  int64_t i0 = start % it->shape[0];
  for (int d = 1; d < nd; d++) { idx[d] = rest % it->shape[d]; rest /= it->shape[d]; }
  int64_t s0[LT_ITER_MAX_OPS];
  for (int k = 0; k < nops; k++) s0[k] = it->strides[k][0];
  int64_t pos = start;
  while (pos < end) {
    int64_t n = it->shape[0] - i0;
    if (n > end - pos) n = end - pos;
    char *ptr[LT_ITER_MAX_OPS];
    for (int k = 0; k < nops; k++) {
      int64_t off = i0 * s0[k];
      for (int d = 1; d < nd; d++) off += idx[d] * it->strides[k][d];
      ptr[k] = it->data[k] + off;
    }
    if (it->needs_cast) run_cast(it, ptr, s0, n, fn, ctx);
    else fn(ptr, s0, n, ctx);
    pos += n;
    i0 = 0;
    for (int d = 1; d < nd; d++) {
      if (++idx[d] < it->shape[d]) break;
      idx[d] = 0;
    }
  }
}

/* 2-d iterations where operands disagree on the fast dim (a transposed
   input with a contiguous one): runs along dim 0 step a large stride for
   some operand, one cache line per element.  Going in TILE x TILE tiles
   keeps those lines in L1 while the tile's columns reuse them. */
#define TILE 64
static int wants_tiles(const lt_iter *it) {
  if (it->ndim != 2 || it->shape[0] < TILE || it->shape[1] < TILE) return 0;
  int far = 0, across = 0;
  for (int k = 0; k < it->nops; k++) {
    int64_t s0 = it->strides[k][0] < 0 ? -it->strides[k][0] : it->strides[k][0];
    int64_t s1 = it->strides[k][1] < 0 ? -it->strides[k][1] : it->strides[k][1];
    if (s0 > 64) far = 1;
    if (s1 > 0 && s1 <= 16 && s1 < s0) across = 1;
  }
  return far && across;
}

/* columns [j0, j1) of dim 1, in tiles */
static void run_tiles(const lt_iter *it, int64_t j0, int64_t j1, lt_loop_fn fn, void *ctx) {
  int nops = it->nops;
  int64_t s0[LT_ITER_MAX_OPS];
  for (int k = 0; k < nops; k++) s0[k] = it->strides[k][0];
  for (int64_t jt = j0; jt < j1; jt += TILE) {
    int64_t je = jt + TILE < j1 ? jt + TILE : j1;
    for (int64_t it0 = 0; it0 < it->shape[0]; it0 += TILE) {
      int64_t m = it->shape[0] - it0 < TILE ? it->shape[0] - it0 : TILE;
      for (int64_t j = jt; j < je; j++) {
        char *ptr[LT_ITER_MAX_OPS];
        for (int k = 0; k < nops; k++) ptr[k] = it->data[k] + it0 * s0[k] + j * it->strides[k][1];
        if (it->needs_cast) run_cast(it, ptr, s0, m, fn, ctx);
        else fn(ptr, s0, m, ctx);
      }
    }
  }
}

typedef struct {
  const lt_iter *it;
  lt_loop_fn fn;
  void *ctx;
  int64_t start, end;
} job_t;

static void *job_main(void *arg) {
  job_t *j = (job_t *)arg;
  if (wants_tiles(j->it)) run_tiles(j->it, j->start, j->end, j->fn, j->ctx);
  else run_range(j->it, j->start, j->end, j->fn, j->ctx);
  return NULL;
}

#define MAX_THREADS 64

/* ---- the worker pool ------------------------------------------------------
   One piece of work at a time: its range is cut into chunks that the
   caller and the woken workers claim with an atomic counter, so a worker
   the scheduler wakes late simply finds fewer (or no) chunks left and the
   caller never waits for a worker that has not started. */
typedef struct work {
  const lt_iter *it;
  lt_loop_fn fn;
  void *ctx;
  int tiles;                /* chunks are dim-1 ranges of run_tiles */
  int64_t total, chunk;
  atomic_llong next;        /* next chunk index */
  int want, joined;         /* workers wanted / that took part (under mu) */
} work_t;

struct lt_pool {
  pthread_mutex_t mu;
  pthread_cond_t wake, done;
  int nworkers, sleeping, main_waiting;
  atomic_int quit, active;  /* written under mu, polled without it */
  _Atomic uint64_t gen;     /* bumped (under mu) per piece of work */
  work_t *w;                /* the current work, NULL between calls */
  pthread_t th[MAX_THREADS];
};

static void do_chunks(work_t *w) {
  for (;;) {
    int64_t c = atomic_fetch_add_explicit(&w->next, 1, memory_order_relaxed);
    int64_t s = c * w->chunk;
    if (s >= w->total) return;
    int64_t e = s + w->chunk < w->total ? s + w->chunk : w->total;
    if (w->tiles) run_tiles(w->it, s, e, w->fn, w->ctx);
    else run_range(w->it, s, e, w->fn, w->ctx);
  }
}

/* Waking a thread parked in the kernel takes 5-50 us on a busy machine,
   as long as a whole 1M-element add, so both sides poll for a while first
   (as OpenMP's workers do, which PyTorch's parallel_for runs on): a loop
   of large ops then hands work over without a kernel wake-up.  The poll is
   bounded in time, so an idle state costs nothing once it has passed, and
   yields the core between rounds: with more runnable threads than cores
   the poller may share one with the thread doing the work. */
#define SPIN_NS 100000
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
/* polls until *v != old (or quit); returns 1 when it changed */
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

lt_pool *lt_pool_new(void) {
  lt_pool *p = (lt_pool *)calloc(1, sizeof *p);
  if (!p) return NULL;
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->wake, NULL);
  pthread_cond_init(&p->done, NULL);
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

/* n items (elements, or dim-1 indices with tiles) over nt threads */
static void run_pool(lt_iter *it, lt_loop_fn fn, void *ctx, int nt, int tiles, int64_t n) {
  lt_pool *p = it->pool;
  work_t w;
  w.it = it;
  w.fn = fn;
  w.ctx = ctx;
  w.tiles = tiles;
  w.total = n;
  /* a few chunks per thread evens out late wake-ups; whole tiles, or
     whole cache lines of the output */
  int64_t ch = (n + 4 * nt - 1) / (4 * nt);
  if (tiles) ch = (ch + TILE - 1) / TILE * TILE;
  else {
    if (ch < 8192) ch = 8192;
    ch = (ch + 63) & ~(int64_t)63;
  }
  w.chunk = ch;
  atomic_init(&w.next, 0);
  w.joined = 0;
  pthread_mutex_lock(&p->mu);
  while (p->nworkers < nt - 1 && p->nworkers < MAX_THREADS) {
    if (pthread_create(&p->th[p->nworkers], NULL, worker_main, p) != 0) break;
    p->nworkers++;
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
}


void lt_iter_run(lt_iter *it, lt_loop_fn fn, void *ctx) {
  int64_t n = it->numel;
  if (n <= 0) return;
  /* the common case: one contiguous run, no casts, small */
  int64_t grain = it->grain > 0 ? it->grain : LT_ITER_GRAIN;
  if (it->ndim == 1 && !it->needs_cast && n < 2 * grain) {
    int64_t s[LT_ITER_MAX_OPS];
    for (int k = 0; k < it->nops; k++) s[k] = it->strides[k][0];
    fn(it->data, s, n, ctx);
    return;
  }
  int nt = it->num_threads;
  if (nt > MAX_THREADS) nt = MAX_THREADS;
  if (n / grain < nt) nt = (int)(n / grain);   /* every thread gets >= grain elements */
  int tiles = wants_tiles(it);
  if (nt <= 1) {
    if (tiles) run_tiles(it, 0, it->shape[1], fn, ctx);
    else run_range(it, 0, n, fn, ctx);
    return;
  }
  if (it->pool) {
    run_pool(it, fn, ctx, nt, tiles, tiles ? it->shape[1] : n);
    return;
  }
  pthread_t th[MAX_THREADS];
  int started[MAX_THREADS];
  job_t jobs[MAX_THREADS];
  int64_t per;
  if (tiles) {   /* jobs are ranges of dim-1 indices, whole tiles */
    n = it->shape[1];
    per = (n + nt - 1) / nt;
    per = (per + TILE - 1) / TILE * TILE;
  } else {
    per = (n + nt - 1) / nt;
    per = (per + 63) & ~(int64_t)63;   /* keep cache lines of the output in one thread */
  }
  for (int t = 0; t < nt; t++) {
    jobs[t].it = it;
    jobs[t].fn = fn;
    jobs[t].ctx = ctx;
    jobs[t].start = (int64_t)t * per < n ? (int64_t)t * per : n;
    jobs[t].end = (int64_t)(t + 1) * per < n ? (int64_t)(t + 1) * per : n;
    started[t] = 0;
  }
  /* thread 0's share runs here; a failed pthread_create runs inline */
  for (int t = 1; t < nt; t++)
    if (jobs[t].start < jobs[t].end) started[t] = pthread_create(&th[t], NULL, job_main, &jobs[t]) == 0;
  job_main(&jobs[0]);
  for (int t = 1; t < nt; t++) {
    if (started[t]) pthread_join(th[t], NULL);
    else if (jobs[t].start < jobs[t].end) job_main(&jobs[t]);
  }
}
