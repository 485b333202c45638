/*
 * lt_parallel.h -- the one thread pool and its grain policy (Lua-free core).
 *
 * Every parallel loop of the library -- elementwise (lt_iter.c), reductions,
 * scans and softmax (lt_reduce.c), and later convolution and linear-algebra
 * loops -- runs on the pool of its lua_State (ltl_settings.pool in the
 * binding), so `T.set_num_threads(n)` bounds all of them at once and
 * `T.set_num_threads(1)` means one thread everywhere.
 *
 * Use:
 *   static void body(void *ctx, int64_t begin, int64_t end, int part) {
 *     ... items [begin, end) ...
 *   }
 *   lt_parallel_for(pool, n, LT_GRAIN, body, &ctx);
 *
 * Grain policy: a split pays only when every thread gets at least `grain`
 * units of work, one unit being about what one element of a memory-bound
 * elementwise loop costs (~1 ns).  LT_GRAIN is that threshold (PyTorch's
 * parallel_for uses the same 32768).  A loop whose items cost more passes
 * work = items * cost (or a smaller grain); a loop whose items cost much
 * less (vectorised reduction passes) divides.  lt_parallel_parts applies the
 * policy; lt_parallel_for is parts + run for one unit per item.
 *
 * Functions run on the pool never touch a lua_State and must not raise.
 * Nested use (a body calling lt_parallel_for again) runs the inner loop
 * on the calling thread.  A NULL pool is valid everywhere: one thread.
 * Nothing here fails: when threads cannot be started, the caller runs the
 * work itself.
 */
#ifndef LT_PARALLEL_H
#define LT_PARALLEL_H

#include <signal.h>
#include <stdint.h>

/* Units of work each thread must get before work is split. */
#define LT_GRAIN 32768
/* The most threads a pool runs (the caller's thread included). */
#define LT_MAX_THREADS 64

typedef struct lt_pool lt_pool;

/* A pool running up to nthreads threads (the caller's included); workers
   start on first use.  NULL when out of memory (treat as one thread). */
lt_pool *lt_pool_new(int nthreads);
/* Joins the workers and frees the pool (NULL is a no-op). */
void lt_pool_free(lt_pool *p);
/* Thread count for later calls (clamped to [1, LT_MAX_THREADS]). */
void lt_pool_set_threads(lt_pool *p, int nthreads);
int lt_pool_threads(const lt_pool *p);          /* 1 for NULL */

/* Interruption: when *flag is non-zero, lt_pool_run stops handing out
   chunks (the chunks running finish; the rest are skipped, so the result
   is incomplete).  The binding points it at its state's interrupt flag
   (ltensor_interrupt_flag) and raises "ltensor.<fn>: interrupted" after an
   op that saw it set.  NULL (the default): never stops. */
void lt_pool_set_interrupt(lt_pool *p, const volatile sig_atomic_t *flag);

/* How many parts to cut `work` units into: min(threads, work / grain,
   units), at least 1 (units: the most independent pieces the loop has). */
int lt_parallel_parts(const lt_pool *p, int64_t work, int64_t grain, int64_t units);

/* fn(ctx, begin, end, part) over [0, n) cut into `parts` ranges, range t
   being [n*t/parts, n*(t+1)/parts): the cut depends only on parts, never on
   scheduling, so per-part partial results combine deterministically.  The
   caller's thread takes part in the work; returns when all parts are done. */
typedef void (*lt_range_fn)(void *ctx, int64_t begin, int64_t end, int part);
void lt_parallel_run(lt_pool *p, int parts, int64_t n, lt_range_fn fn, void *ctx);

/* lt_parallel_run with lt_parallel_parts(p, n, grain, n): one unit per item. */
void lt_parallel_for(lt_pool *p, int64_t n, int64_t grain, lt_range_fn fn, void *ctx);

/* The primitive under both: fn(ctx, c) for every chunk c in [0, nchunks),
   chunks claimed dynamically by up to nthreads threads (more chunks than
   threads even out threads the scheduler starts late). */
typedef void (*lt_chunk_fn)(void *ctx, int64_t chunk);
void lt_pool_run(lt_pool *p, int nthreads, int64_t nchunks, lt_chunk_fn fn, void *ctx);

#endif
