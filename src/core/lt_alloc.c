/* lt_alloc.c -- the per-state caching allocator (see lt_alloc.h). */
#include <string.h>
#include "lt_alloc.h"

#if defined(__linux__) || defined(__APPLE__) || defined(__unix__)
#include <sys/mman.h>
#define LT_HAVE_MMAP 1
#else
#define LT_HAVE_MMAP 0
#endif

/* Under AddressSanitizer a cached block is poisoned (LT_POISON, lt_alloc.h):
   a use after release is reported instead of reading another tensor's data. */

void lt_alloc_init(lt_alloc *A, lt_allocf allocf, void *alloc_ud, int use_mmap) {
  memset(A, 0, sizeof *A);
  A->allocf = allocf;
  A->alloc_ud = alloc_ud;
  A->use_mmap = use_mmap && LT_HAVE_MMAP;
  A->collect_at = LT_ALLOC_COLLECT_MIN;
  A->step_at = LT_ALLOC_STEP_MIN;
}

/* Four classes per power of two from LT_ALLOC_MIN_CACHED; smaller sizes
   are not rounded (they are never cached). */
static size_t class_size(size_t n) {
  if (n <= LT_ALLOC_MIN_CACHED) return n ? n : 1;
  int e = 63 - __builtin_clzll((unsigned long long)(n - 1));   /* 2^e < n <= 2^(e+1) */
  size_t step = (size_t)1 << (e - 2);
  return (n + step - 1) & ~(step - 1);
}

static int is_mapped(const lt_alloc *A, size_t size) { return A->use_mmap && size >= LT_ALLOC_HUGE; }

size_t lt_alloc_block_size(const lt_alloc *A, size_t nbytes) {
  size_t c = class_size(nbytes);
  /* lua_Alloc promises 16-byte alignment at most: room to align by hand */
  return is_mapped(A, c) ? c : c + LT_ALIGN;
}

static void *sys_alloc(lt_alloc *A, size_t size) {
#if LT_HAVE_MMAP
  if (is_mapped(A, size)) {
    /* map one huge page more and cut both ends, so the block starts on a
       2 MB boundary and every whole 2 MB of it can be a huge page */
    size_t span = size + LT_ALLOC_HUGE;
    char *p = (char *)mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    char *q = (char *)(((uintptr_t)p + LT_ALLOC_HUGE - 1) & ~(uintptr_t)(LT_ALLOC_HUGE - 1));
    if (q > p) munmap(p, (size_t)(q - p));
    if (p + span > q + size) munmap(q + size, (size_t)(p + span - (q + size)));
#ifdef MADV_HUGEPAGE
    madvise(q, size, MADV_HUGEPAGE);   /* advice only: a refusal changes nothing */
#endif
    return q;
  }
#endif
  return A->allocf(A->alloc_ud, NULL, 0, size);
}

static void sys_free(lt_alloc *A, void *block, size_t size) {
#if LT_HAVE_MMAP
  if (is_mapped(A, size)) { munmap(block, size); return; }
#endif
  A->allocf(A->alloc_ud, block, size, 0);
}

/* Drop slot i from the cache (the block is the caller's). */
static void *take_slot(lt_alloc *A, int i) {
  void *b = A->slot[i].block;
  A->cached -= A->slot[i].size;
  A->n--;
  memmove(&A->slot[i], &A->slot[i + 1], sizeof(lt_alloc_slot) * (size_t)(A->n - i));
  return b;
}

/* Give the k oldest cached blocks back to the system (one memmove). */
static void drop_oldest(lt_alloc *A, int k) {
  for (int i = 0; i < k; i++) {
    LT_UNPOISON(A->slot[i].block, A->slot[i].size);
    sys_free(A, A->slot[i].block, A->slot[i].size);
    A->cached -= A->slot[i].size;
    A->trimmed += A->slot[i].size;
  }
  A->n -= k;
  memmove(&A->slot[0], &A->slot[k], sizeof(lt_alloc_slot) * (size_t)A->n);
}

/* How many of the oldest blocks must go so that at most keep bytes stay. */
static int excess(const lt_alloc *A, size_t keep) {
  size_t c = A->cached;
  int k = 0;
  while (k < A->n && c > keep) c -= A->slot[k++].size;
  return k;
}

size_t lt_alloc_trim(lt_alloc *A, size_t keep) {
  size_t before = A->cached;
  drop_oldest(A, excess(A, keep));
  return before - A->cached;
}

static void handed_out(lt_alloc *A, size_t size) {
  A->live += size;
  if (A->live > A->peak) A->peak = A->live;
  if (size >= LT_ALLOC_COUNTED) {   /* smaller ones: see lt_alloc_should_collect */
    A->since += size;
    A->since_step += size;
  }
}

int lt_alloc_block(lt_alloc *A, size_t nbytes, int cached_only, void **block, size_t *size) {
  size_t bs = lt_alloc_block_size(A, nbytes);
  *block = NULL;
  *size = bs;
  if (bs < nbytes) return LT_ALLOC_NOMEM;   /* wrapped around */
  if (A->limit && (bs > A->limit || A->live > A->limit - bs)) return LT_ALLOC_OVER_LIMIT;
  if (bs >= LT_ALLOC_MIN_CACHED) {
    for (int i = A->n - 1; i >= 0; i--)   /* newest first: its pages are the warmest */
      if (A->slot[i].size == bs) {
        void *b = take_slot(A, i);
        LT_UNPOISON(b, bs);
        A->hits++;
        handed_out(A, bs);
        *block = b;
        return LT_ALLOC_OK;
      }
  }
  if (cached_only) return LT_ALLOC_NOMEM;
  if (bs >= LT_ALLOC_MIN_CACHED) A->misses++;
  /* with a limit, cached blocks make room for new memory */
  if (A->limit && A->cached > A->limit - A->live - bs) lt_alloc_trim(A, A->limit - A->live - bs);
  void *b = sys_alloc(A, bs);
  if (!b && A->n > 0) {   /* under pressure: give the cache back, then once more */
    lt_alloc_trim(A, 0);
    b = sys_alloc(A, bs);
  }
  if (!b) return LT_ALLOC_NOMEM;
  handed_out(A, bs);
  *block = b;
  return LT_ALLOC_OK;
}

void lt_alloc_free(lt_alloc *A, void *block, size_t size) {
  A->live -= size;
  sys_free(A, block, size);
}

void lt_alloc_release(lt_alloc *A, void *block, size_t size) {
  size_t live = A->live - size;   /* without this block */
  /* the cache holds at most the larger of RETAIN, the live bytes and what
     the program's own peak leaves beside them (live + cached <= peak): a
     training step whose activations peak at 640 MB and fall to 160 MB
     between steps keeps its blocks for the next forward (with the old
     bound, max(live, RETAIN), it gave ~450 MB back and faulted them in again
     every step: a third of a transformer step on this VM) */
  size_t bound = live > LT_ALLOC_RETAIN ? live : LT_ALLOC_RETAIN;
  if (A->peak > live && A->peak - live > bound) bound = A->peak - live;
  if (A->limit) bound = A->limit <= live ? 0 : (bound < A->limit - live ? bound : A->limit - live);
  if (A->closed || size < LT_ALLOC_MIN_CACHED || size > bound) {
    lt_alloc_free(A, block, size);
    return;
  }
  A->live -= size;
  /* make room: the oldest blocks go first */
  int k = excess(A, bound - size);
  if (A->n - k == LT_ALLOC_SLOTS) k++;
  drop_oldest(A, k);
  LT_POISON(block, size);
  A->slot[A->n].block = block;
  A->slot[A->n].size = size;
  A->slot[A->n].stamp = A->epoch;
  A->n++;
  A->cached += size;
}

void lt_alloc_returned(lt_alloc *A, size_t size) {
  if (size < LT_ALLOC_COUNTED) return;
  A->since = A->since > size ? A->since - size : 0;
  A->since_step = A->since_step > size ? A->since_step - size : 0;
}

void lt_alloc_age(lt_alloc *A) {
  int k = 0;   /* stamps grow along slot[]: the stale ones are a prefix */
  while (k < A->n && A->slot[k].stamp < A->epoch) k++;
  drop_oldest(A, k);
  A->epoch++;
}

void lt_alloc_stepped(lt_alloc *A, int hit, int64_t ns) {
  A->since_step = 0;
  if (hit && ns <= LT_ALLOC_STEP_CHEAP_NS) A->step_at = LT_ALLOC_STEP_MIN;
  else if (A->step_at < A->collect_at) A->step_at *= 2;   /* see lt_alloc_should_step */
}

void lt_alloc_collected(lt_alloc *A, size_t lua_heap) {
  A->since = 0;
  A->collections++;
  size_t at = LT_ALLOC_COLLECT_MIN;
  if (A->live > at) at = A->live;
  if (lua_heap > at) at = lua_heap;
  A->collect_at = at;
}

void lt_alloc_close(lt_alloc *A) {
  lt_alloc_trim(A, 0);
  A->closed = 1;
}
