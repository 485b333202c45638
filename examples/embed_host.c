/*
 * embed_host.c -- a tiny host that embeds Lua 5.4 with ltensor linked in
 * statically, the way a game or tool engine would.  It is also the test of
 * the embedding C API (spec/embed_spec.lua builds and runs it).
 *
 * Build (from the checkout, after `make`):
 *   cc -Isrc $(pkg-config --cflags lua5.4) examples/embed_host.c -o embed_host \
 *      build/libltensor.a $(pkg-config --libs lua5.4 openblas) -lm -lpthread
 *
 * What it shows:
 *  - a counting allocator given to lua_newstate: ltensor's storage goes
 *    through it, and 0 bytes are left after lua_close;
 *  - luaL_requiref(L, "ltensor", luaopen_ltensor, 1) with no Lua files
 *    reachable (package.path and cpath empty): the modules are built in;
 *  - host memory handed to Lua without copying (ltensor_push_external), a
 *    script writing into it, release() called exactly once;
 *  - a tensor made by a script read back from C (ltensor_get);
 *  - an error raised by ltensor caught with lua_pcall, the host carrying on;
 *  - two lua_States running on two threads at the same time.
 * Exit status 0 when every check passed.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>
#include "ltensor.h"

static int failures = 0;
#define CHECK(cond, ...)                                                   \
  do {                                                                     \
    if (!(cond)) {                                                         \
      failures++;                                                          \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);      \
      fprintf(stderr, __VA_ARGS__);                                        \
      fputc('\n', stderr);                                                 \
    }                                                                      \
  } while (0)

/* ---- a counting allocator (one per state: no shared counter) ----------- */
typedef struct counter {
  long long bytes, peak, blocks;
} counter;

static void *count_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  counter *c = (counter *)ud;
  /* osize is the block size when ptr != NULL (otherwise a type tag). */
  size_t old = ptr ? osize : 0;
  if (nsize == 0) {
    if (ptr) { c->bytes -= (long long)old; c->blocks--; }
    free(ptr);
    return NULL;
  }
  void *p = realloc(ptr, nsize);
  if (!p) return NULL;
  c->bytes += (long long)nsize - (long long)old;
  if (!ptr) c->blocks++;
  if (c->bytes > c->peak) c->peak = c->bytes;
  return p;
}

static lua_State *new_state(counter *c) {
  lua_State *L = lua_newstate(count_alloc, c);
  if (!L) return NULL;
  luaL_openlibs(L);
  /* No Lua or C module files are reachable: everything comes from the
     static library. */
  (void)luaL_dostring(L, "package.path = '' package.cpath = ''");
  luaL_requiref(L, "ltensor", luaopen_ltensor, 1);   /* also the global ltensor */
  lua_setglobal(L, "T");                             /* scripts below say T */
  return L;
}

static int run(lua_State *L, const char *code, char *err, size_t errlen) {
  int st = luaL_loadstring(L, code);
  if (st == LUA_OK) st = lua_pcall(L, 0, 0, 0);
  if (st != LUA_OK) {
    const char *m = lua_tostring(L, -1);
    snprintf(err, errlen, "%s", m ? m : "?");
    lua_pop(L, 1);
  } else if (err && errlen) {
    err[0] = 0;
  }
  return st;
}

/* ---- release callbacks --------------------------------------------------- */
typedef struct host_buffer {
  float *data;
  int releases;
} host_buffer;

static void release_buffer(void *ud) {
  host_buffer *b = (host_buffer *)ud;
  b->releases++;
}

static int bad_releases = 0;
static void release_count(void *ud) { (void)ud; bad_releases++; }

/* pushes external memory with bad arguments (called under lua_pcall) */
static int push_bad(lua_State *L) {
  static float buf[4];
  int which = (int)luaL_checkinteger(L, 1);
  int64_t shape[2] = {2, 2}, negshape[2] = {2, -1}, negstride[2] = {-1, 1};
  switch (which) {
  case 1: ltensor_push_external(L, buf, (ltensor_dtype)99, 2, shape, NULL, release_count, NULL); break;
  case 2: ltensor_push_external(L, buf, LTENSOR_FLOAT32, LTENSOR_MAX_DIMS + 1, shape, NULL, release_count, NULL); break;
  case 3: ltensor_push_external(L, buf, LTENSOR_FLOAT32, 2, negshape, NULL, release_count, NULL); break;
  case 4: ltensor_push_external(L, buf, LTENSOR_FLOAT32, 2, shape, negstride, release_count, NULL); break;
  case 5: ltensor_push_external(L, NULL, LTENSOR_FLOAT32, 2, shape, NULL, release_count, NULL); break;
  case 6: ltensor_push_external(L, buf, (ltensor_dtype)-1, 0, NULL, NULL, release_count, NULL); break;
  }
  return 1;
}

static void test_single_state(void) {
  counter c = {0, 0, 0};
  char err[512];
  lua_State *L = new_state(&c);
  CHECK(L != NULL, "lua_newstate failed");
  if (!L) return;

  /* the modules really came from the library */
  CHECK(run(L, "assert(package.searchpath('ltensor', package.path) == nil)\n"
               "assert(require('ltensor') == T and require('ltensor.nn') == T.nn)\n"
               "assert(T.zeros(2, 3):size(2) == 3)", err, sizeof err) == LUA_OK, "%s", err);

  /* zero-copy host memory: a 2x3 float32 frame */
  host_buffer frame = { calloc(6, sizeof(float)), 0 };
  for (int i = 0; i < 6; i++) frame.data[i] = (float)(i + 1);
  int64_t shape[2] = {2, 3};
  ltensor_push_external(L, frame.data, LTENSOR_FLOAT32, 2, shape, NULL, release_buffer, &frame);
  lua_setglobal(L, "frame");
  CHECK(run(L, "assert(frame:get(2, 3) == 6.0, 'reads host memory')\n"
               "frame:set(1, 2, 20)\n"
               "frame:set(2, 1, -4.5)\n"
               "assert(frame.dtype == T.float32 and frame:size(1) == 2 and frame:size(2) == 3)\n"
               "result = frame:clone()\n"
               "result:set(1, 1, 100)", err, sizeof err) == LUA_OK, "%s", err);
  CHECK(frame.data[1] == 20.0f && frame.data[3] == -4.5f, "script writes did not reach the host buffer");
  CHECK(frame.data[0] == 1.0f, "clone wrote into the host buffer");

  /* a strided (transposed) view of the same kind of memory */
  host_buffer tframe = { calloc(6, sizeof(float)), 0 };
  for (int i = 0; i < 6; i++) tframe.data[i] = (float)(i + 1);
  int64_t tshape[2] = {3, 2}, tstrides[2] = {1, 3};
  ltensor_push_external(L, tframe.data, LTENSOR_FLOAT32, 2, tshape, tstrides, release_buffer, &tframe);
  lua_setglobal(L, "tframe");
  CHECK(run(L, "assert(tframe:get(1, 2) == 4.0 and tframe:get(3, 1) == 3.0)\n"
               "assert(not tframe:is_contiguous())\n"
               "tframe = nil collectgarbage() collectgarbage()", err, sizeof err) == LUA_OK, "%s", err);
  CHECK(tframe.releases == 1, "strided frame released %d times", tframe.releases);

  /* read back a tensor made by the script */
  ltensor_info info;
  lua_getglobal(L, "result");
  memset(&info, 0, sizeof info);
  int got = ltensor_get(L, -1, &info);
  CHECK(got == 1, "ltensor_get on a tensor");
  if (got) CHECK(info.dtype == LTENSOR_FLOAT32 && info.ndim == 2 && info.shape[0] == 2 && info.shape[1] == 3
        && info.strides[0] == 3 && info.strides[1] == 1, "ltensor_get: wrong description");
  if (got) CHECK(((float *)info.data)[0] == 100.0f && ((float *)info.data)[1] == 20.0f, "ltensor_get: wrong data");
  lua_pop(L, 1);
  CHECK(ltensor_get(L, -1, &info) == 0 || lua_gettop(L) == 0, "ltensor_get on an empty stack");
  lua_pushinteger(L, 3);
  lua_newtable(L);
  lua_pushlightuserdata(L, &info);
  CHECK(ltensor_get(L, -3, &info) == 0 && ltensor_get(L, -2, &info) == 0 && ltensor_get(L, -1, &info) == 0,
        "ltensor_get accepted a non-tensor");
  CHECK(ltensor_get(L, 50, &info) == 0, "ltensor_get on an unused slot");
  lua_pop(L, 3);
  CHECK(run(L, "freed = T.zeros(2) freed:free()", err, sizeof err) == LUA_OK, "%s", err);
  lua_getglobal(L, "freed");
  CHECK(ltensor_get(L, -1, &info) == 0, "ltensor_get on a freed tensor");
  lua_pop(L, 1);

  /* a deliberate error from ltensor: caught, and the state keeps working */
  CHECK(run(L, "T.zeros(-1)", err, sizeof err) != LUA_OK, "negative size did not raise");
  CHECK(strstr(err, "ltensor") != NULL, "error message without ltensor: %s", err);
  CHECK(run(L, "frame:get(3, 1)", err, sizeof err) != LUA_OK, "out-of-range index did not raise");
  CHECK(run(L, "assert(frame:get(1, 2) == 20)", err, sizeof err) == LUA_OK, "state broken after error: %s", err);

  /* bad pushes raise after calling release once */
  for (int which = 1; which <= 6; which++) {
    int before = bad_releases;
    lua_pushcfunction(L, push_bad);
    lua_pushinteger(L, which);
    int st = lua_pcall(L, 1, 1, 0);
    const char *msg = lua_tostring(L, -1);
    CHECK(st != LUA_OK, "bad push %d did not raise", which);
    CHECK(msg && strstr(msg, "ltensor.push_external: "), "bad push %d: message %s", which, msg ? msg : "?");
    CHECK(bad_releases == before + 1, "bad push %d: release called %d times", which, bad_releases - before);
    lua_pop(L, 1);
  }

  /* release exactly once: not while a tensor (or a view) still sees it */
  CHECK(frame.releases == 0, "released while still referenced");
  CHECK(run(L, "local v = T._methods.transpose and frame:transpose(1, 2)\n"
               "keep = v or frame\n"
               "frame = nil collectgarbage() collectgarbage()", err, sizeof err) == LUA_OK, "%s", err);
  CHECK(frame.releases == 0, "released while a view was alive");
  CHECK(run(L, "keep = nil collectgarbage() collectgarbage()", err, sizeof err) == LUA_OK, "%s", err);
  CHECK(frame.releases == 1, "frame released %d times after collection", frame.releases);

  /* a <close> tensor of host memory releases at scope exit */
  host_buffer scoped = { calloc(4, sizeof(float)), 0 };
  int64_t four = 4;
  ltensor_push_external(L, scoped.data, LTENSOR_FLOAT32, 1, &four, NULL, release_buffer, &scoped);
  lua_setglobal(L, "scoped");
  CHECK(run(L, "do local s <close> = scoped; scoped = nil; s:fill_(7) end", err, sizeof err) == LUA_OK, "%s", err);
  CHECK(scoped.releases == 1 && scoped.data[3] == 7.0f, "<close> did not release at once (%d)", scoped.releases);

  /* an empty tensor may come without memory */
  host_buffer empty = { NULL, 0 };
  int64_t zero = 0;
  ltensor_push_external(L, NULL, LTENSOR_INT64, 1, &zero, NULL, release_buffer, &empty);
  CHECK(ltensor_get(L, -1, &info) == 1 && info.ndim == 1 && info.shape[0] == 0, "empty external tensor");
  lua_pop(L, 1);

  lua_close(L);
  CHECK(frame.releases == 1 && empty.releases == 1 && scoped.releases == 1 && tframe.releases == 1,
        "after close: releases %d %d %d %d", frame.releases, empty.releases, scoped.releases, tframe.releases);
  CHECK(c.bytes == 0 && c.blocks == 0, "%lld bytes in %lld blocks outstanding after lua_close", c.bytes, c.blocks);
  printf("single state: peak %lld bytes, %lld outstanding after close\n", c.peak, c.bytes);
  free(frame.data);
  free(tframe.data);
  free(scoped.data);
}

/* ---- two states on two threads ------------------------------------------ */
typedef struct job {
  const char *dtype;
  int ok;
  long long outstanding;
  int releases;
  char err[512];
} job;

static void *thread_main(void *arg) {
  job *j = (job *)arg;
  counter c = {0, 0, 0};
  lua_State *L = new_state(&c);
  if (!L) { snprintf(j->err, sizeof j->err, "lua_newstate failed"); return NULL; }
  host_buffer buf = { calloc(1000, sizeof(float)), 0 };
  int64_t n = 1000;
  ltensor_push_external(L, buf.data, LTENSOR_FLOAT32, 1, &n, NULL, release_buffer, &buf);
  lua_setglobal(L, "buf");
  lua_pushstring(L, j->dtype);
  lua_setglobal(L, "want");
  /* Each state sets its own default dtype: per-state settings must not
     leak between threads. */
  const char *code =
      "T.set_default_dtype(T[want])\n"
      "for i = 1, 300 do\n"
      "  local a = T.zeros(64, 16)\n"
      "  assert(a.dtype == T[want], 'default dtype leaked between states')\n"
      "  assert(T.get_default_dtype() == T[want])\n"
      "  a:fill_(i)\n"
      "  assert(a:get(64, 16) == i)\n"
      "  buf:set(i, i)\n"
      "  local ok = pcall(T.zeros, -1)\n"
      "  assert(not ok)\n"
      "end\n"
      "buf = nil collectgarbage()";
  j->ok = run(L, code, j->err, sizeof j->err) == LUA_OK;
  lua_close(L);
  j->outstanding = c.bytes;
  j->releases = buf.releases;
  if (buf.data[299] != 300.0f) { j->ok = 0; snprintf(j->err, sizeof j->err, "host buffer not written"); }
  free(buf.data);
  return NULL;
}

static void test_threads(void) {
  job jobs[2] = { {"float64", 0, -1, 0, ""}, {"float32", 0, -1, 0, ""} };
  pthread_t th[2];
  for (int i = 0; i < 2; i++) CHECK(pthread_create(&th[i], NULL, thread_main, &jobs[i]) == 0, "pthread_create");
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < 2; i++) {
    CHECK(jobs[i].ok, "thread %d (%s): %s", i, jobs[i].dtype, jobs[i].err);
    CHECK(jobs[i].outstanding == 0, "thread %d: %lld bytes outstanding", i, jobs[i].outstanding);
    CHECK(jobs[i].releases == 1, "thread %d: released %d times", i, jobs[i].releases);
  }
  printf("two threads: %s, %s\n", jobs[0].ok ? "ok" : "failed", jobs[1].ok ? "ok" : "failed");
}

int main(void) {
  test_single_state();
  test_threads();
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("all embedding checks passed\n");
  return 0;
}
