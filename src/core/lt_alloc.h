/*
 * lt_alloc.h -- the per-state caching allocator for tensor data (Lua-free).
 *
 * Every tensor whose data does not fit inside its own userdata (more than
 * 256 bytes) gets a heap block from here.  Why a cache: the collector frees
 * a temporary some time after its last use, and a fresh block of many MB is
 * new memory whose every page faults in again (a fresh 64 MB result cost
 * 30x the arithmetic; a page fault costs ~10 us on this VM).  Freed blocks
 * of 8 KB and more are kept, by size class, and the next request of the
 * same class takes the newest of them (warm in the CPU caches).  From 8 KB,
 * not 64 KB: glibc gives the top of its heap back after a burst of frees,
 * and a loop of 32 KB products then faulted its outputs in again (matmul
 * 64x64 float64 ran 3x slower after a large case).
 *
 * Size classes: four per power of two above 8 KB (8K, 10K, 12K, 14K, 16K...),
 * so a block is at most 25% larger than asked (pages never touched cost no
 * resident memory).
 *
 * Where blocks come from: the state's lua_Alloc (so a host's allocator sees
 * and can refuse tensor memory), except when that is Lua's default
 * allocator (plain realloc/free): then blocks of 2 MB and more are mmap'd
 * directly, 2 MB-aligned, with madvise(MADV_HUGEPAGE) so that transparent
 * huge pages back them (fewer faults and TLB misses).
 *
 * Retention: the cache keeps at most LT_ALLOC_SLOTS blocks and at most the
 * largest of LT_ALLOC_RETAIN (256 MB), the bytes of live blocks and the peak
 * of live bytes less the live ones (so live + cached stays within the
 * program's own peak); beyond that the oldest cached blocks are freed.
 * lt_alloc_age, called at the end of every collection cycle the program or
 * Lua's pacing runs, frees the blocks that stayed unused for a whole cycle
 * (not at the end of the collections the binding runs itself to find
 * blocks: a training step runs several of those, and a block its forward
 * pass uses once per step would be given back between two steps);
 * lt_alloc_trim frees them under pressure.
 *
 * Accounting (what T.memory_stats reports): live = bytes of blocks held by
 * storages (block sizes: the size class, plus 64 bytes of alignment slack
 * when the block comes from lua_Alloc); cached = bytes of cached blocks.
 * A limit, when set, bounds live + the new block; the cache is trimmed
 * first so that live + cached stays within it too.
 *
 * Nothing here raises or calls Lua; the binding decides when to collect
 * garbage (lt_alloc_should_collect) and raises the errors.  Not thread-safe:
 * one allocator per lua_State, used by the thread that runs the state.
 */
#ifndef LT_ALLOC_H
#define LT_ALLOC_H

#include <stddef.h>
#include <stdint.h>

typedef void *(*lt_allocf)(void *ud, void *ptr, size_t osize, size_t nsize); /* = lua_Alloc */

#define LT_ALIGN 64                              /* data alignment of every heap block */
#define LT_ALLOC_SLOTS 512                       /* cached blocks at most */
#define LT_ALLOC_MIN_CACHED ((size_t)1 << 10)    /* smaller blocks go straight back */
#define LT_ALLOC_COUNTED ((size_t)8 << 10)       /* smaller blocks do not pace full collections */
#define LT_ALLOC_RETAIN ((size_t)256 << 20)      /* cache bound when less is live */
#define LT_ALLOC_HUGE ((size_t)2 << 20)          /* mmap'd, 2 MB-aligned from this size */
#define LT_ALLOC_COLLECT_MIN ((size_t)64 << 20)  /* see lt_alloc_should_collect */
#define LT_ALLOC_PACED ((size_t)64 << 10)        /* smaller blocks: the binding hints the collector per 256 KB */

typedef struct lt_alloc_slot {
  void *block;
  size_t size;          /* block size (what was allocated) */
  unsigned stamp;       /* epoch when cached (lt_alloc_age) */
} lt_alloc_slot;

typedef struct lt_alloc {
  lt_allocf allocf;     /* the state's allocator and its ud */
  void *alloc_ud;
  int use_mmap;         /* blocks >= LT_ALLOC_HUGE are mmap'd (default allocator only) */
  int closed;           /* after lt_alloc_close: released blocks are freed at once */
  lt_alloc_slot slot[LT_ALLOC_SLOTS];   /* oldest first */
  int n;
  size_t cached;        /* bytes in slot[] */
  size_t live;          /* bytes of blocks held by storages */
  size_t peak;          /* the largest live seen (lt_alloc_reset_peak) */
  size_t limit;         /* 0: none */
  size_t since;         /* bytes of cacheable blocks handed out since the last lt_alloc_collected */
  size_t collect_at;    /* since >= collect_at: a collection is worth its cost */
  unsigned epoch;       /* collection cycles seen (lt_alloc_age) */
  size_t since_step;    /* bytes handed out since the last lt_alloc_stepped */
  size_t step_at;       /* since_step >= step_at: a miss may try a GC step first */
  int stepping;         /* a GC step of lt_alloc_should_step runs: do not age */
  int pacing;           /* a collection of lt_alloc_should_collect runs: do not age */
  /* counters, for T.memory_stats */
  uint64_t hits;        /* blocks of cacheable sizes taken from the cache */
  uint64_t misses;      /* ... allocated new */
  uint64_t collections; /* lt_alloc_collected calls */
  uint64_t trimmed;     /* bytes of cached blocks given back */
} lt_alloc;

/* Result of lt_alloc_block. */
enum { LT_ALLOC_OK = 0, LT_ALLOC_NOMEM = 1, LT_ALLOC_OVER_LIMIT = 2 };

/* use_mmap: the state's allocator is Lua's default one (and no sanitizer
   needs to see the blocks), so large blocks may bypass it. */
void lt_alloc_init(lt_alloc *A, lt_allocf allocf, void *alloc_ud, int use_mmap);
/* The block size for nbytes of data (size class, alignment slack). */
size_t lt_alloc_block_size(const lt_alloc *A, size_t nbytes);
/* A block for nbytes of data: *block (to free) and *size (its size), data
   at lt_alloc_data(*block).  Tries the cache first; cached_only: do not
   allocate new memory (returns LT_ALLOC_NOMEM on a miss).  Never raises. */
int lt_alloc_block(lt_alloc *A, size_t nbytes, int cached_only, void **block, size_t *size);
static inline char *lt_alloc_data(void *block) {
  return (char *)(((uintptr_t)block + LT_ALIGN - 1) & ~(uintptr_t)(LT_ALIGN - 1));
}
/* A storage is done with a block: keep it in the cache, or free it. */
void lt_alloc_release(lt_alloc *A, void *block, size_t size);
/* The program is giving back a block it was handed without the collector
   (an op's scratch dropped at its end, t:free()): those bytes never waited
   as garbage, so they leave the distance to the next paced collection and
   step (lt_alloc_should_collect).  Call before releasing or freeing it.
   Scratch is most of what a batch-1 CNN pass is handed (im2col and
   Winograd buffers): counted, it ran a full collection every other pass. */
void lt_alloc_returned(lt_alloc *A, size_t size);
/* Free a block at once (t:free(), <close>): not cached. */
void lt_alloc_free(lt_alloc *A, void *block, size_t size);
/* Free cached blocks, oldest first, until at most keep bytes stay cached.
   Returns the bytes freed. */
size_t lt_alloc_trim(lt_alloc *A, size_t keep);
/* The end of a collection cycle: free the blocks cached before the previous
   cycle ended (unused for a whole cycle). */
void lt_alloc_age(lt_alloc *A);
/* Should the binding run a full collection before allocating fresh memory?
   Yes once the bytes handed out since the last one reach collect_at: the
   larger of LT_ALLOC_COLLECT_MIN, the live bytes and the Lua heap at the
   last collection -- so at most that much garbage piles up between
   collections, and a collection's cost (proportional to the Lua heap) is
   spread over at least as many bytes (Lua's own 200% pause, for blocks).
   Only blocks of LT_ALLOC_COUNTED or more count: smaller ones are many and
   cheap, and the binding tells Lua's own collector about them (a GC step
   per 256 KB), whose pacing frees them sooner. */
static inline int lt_alloc_should_collect(const lt_alloc *A) { return A->since >= A->collect_at; }
/* Before a miss of a block of LT_ALLOC_PACED or more costs fresh memory
   (one page fault per 4 KB, ~10 us each on a VM, and pages cold in the CPU
   caches), is one basic GC step worth trying?  In generational mode (lua5.4's interpreter) a step is a young
   collection: a few microseconds, and it frees the temporaries of the last
   few ops -- the loop then reuses one or two warm blocks, as a refcounted
   PyTorch does.  In incremental mode a step advances the cycle by a bounded
   amount.  When steps stop paying (no block of the class comes back: the
   collector is incremental, or the program keeps what it makes) the bytes
   between steps double, up to the full-collection distance; a step that
   pays resets them (lt_alloc_stepped).  Only a cheap step pays (at most
   LT_ALLOC_STEP_CHEAP_NS: a young collection takes 1-2 us, an incremental
   step ~50k units of marking): in incremental mode steps that reset the
   distance on every hit made a loop of 4 MB results 2.3x slower; now they
   back off to one per full-collection distance. */
#define LT_ALLOC_STEP_MIN ((size_t)64 << 10)
#define LT_ALLOC_STEP_CHEAP_NS 20000
/* bsize: the block size asked (lt_alloc_block_size).  Blocks under
   LT_ALLOC_PACED never step first: the binding already paces the collector
   for them (per 256 KB), and a step before every other 40 KB miss cost a
   loop of such ops 15%. */
static inline int lt_alloc_should_step(const lt_alloc *A, size_t bsize) {
  return bsize >= LT_ALLOC_PACED && A->since_step >= A->step_at;
}
/* The binding ran that step; hit: it gave back a block of the class asked;
   ns: how long it took. */
void lt_alloc_stepped(lt_alloc *A, int hit, int64_t ns);
/* The binding ran a full collection; lua_heap: the Lua heap's bytes now. */
void lt_alloc_collected(lt_alloc *A, size_t lua_heap);
/* Free every cached block; later releases free at once (the state closes). */
void lt_alloc_close(lt_alloc *A);

/* AddressSanitizer annotations of heap memory (cached blocks, alignment
   slack); nothing in other builds. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define LT_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define LT_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define LT_POISON(p, n) ((void)(p), (void)(n))
#define LT_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#endif
