/*
 * ltensor.h -- public C API of ltensor, for hosts that embed Lua 5.4.
 *
 * Tutorial
 * --------
 *   #include "ltensor.h"
 *
 *   lua_State *L = luaL_newstate();
 *   luaL_openlibs(L);
 *   luaL_requiref(L, "ltensor", luaopen_ltensor, 0);   -- T is now on the stack
 *   lua_pop(L, 1);
 *
 *   // hand a host buffer to Lua without copying; release() runs exactly once
 *   int64_t shape[2] = {480, 640};
 *   ltensor_push_external(L, pixels, LTENSOR_FLOAT32, 2, shape, NULL, free_pixels, pixels);
 *   lua_setglobal(L, "frame");
 *
 *   // read a tensor produced by a script
 *   ltensor_info info;
 *   lua_getglobal(L, "result");
 *   if (ltensor_get(L, -1, &info)) { ... info.data, info.shape, info.strides ... }
 *
 * Build: compile with -Isrc $(pkg-config --cflags lua5.4) and link
 * build/libltensor.a $(pkg-config --libs lua5.4 openblas) -lm -lpthread.
 *
 * Every failure is a Lua error raised on the given state; the library never
 * prints, exits or aborts.  All settings (default dtype, promotion mode, grad
 * mode, print options, random generator) live per lua_State, so independent
 * states may run on different threads at the same time.
 */
#ifndef LTENSOR_H
#define LTENSOR_H

#include <stdint.h>
#include <lua.h>

#define LTENSOR_VERSION_MAJOR 0
#define LTENSOR_VERSION_MINOR 1
#define LTENSOR_VERSION_PATCH 0
#define LTENSOR_VERSION_NUM \
  (LTENSOR_VERSION_MAJOR * 10000 + LTENSOR_VERSION_MINOR * 100 + LTENSOR_VERSION_PATCH)

/* Maximum number of dimensions of a tensor. */
#define LTENSOR_MAX_DIMS 16

/* The 16 element types.  The order is the promotion lattice's reading order
   and matches the internal dtype list (checked at compile time). */
typedef enum ltensor_dtype {
  LTENSOR_BOOL, LTENSOR_UINT8, LTENSOR_UINT16, LTENSOR_UINT32, LTENSOR_UINT64,
  LTENSOR_INT8, LTENSOR_INT16, LTENSOR_INT32, LTENSOR_INT64,
  LTENSOR_FLOAT16, LTENSOR_BFLOAT16, LTENSOR_FLOAT32, LTENSOR_FLOAT64,
  LTENSOR_COMPLEX32, LTENSOR_COMPLEX64, LTENSOR_COMPLEX128,
  LTENSOR_NUM_DTYPES
} ltensor_dtype;

/* A read-only description of a tensor.  data points at the first element
   (storage offset applied); strides are in elements and may be 0 or
   negative-free arbitrary positive values (expanded views have 0). */
typedef struct ltensor_info {
  void *data;
  ltensor_dtype dtype;
  int ndim;
  const int64_t *shape;
  const int64_t *strides;
} ltensor_info;

/* Opens the whole library, its Lua modules included (no files needed), and
   returns 1 with the module table on the stack; usable with luaL_requiref. */
int luaopen_ltensor(lua_State *L);

/* Opens only the C core (what `require "ltensor.core"` loads). */
int luaopen_ltensor_core(lua_State *L);

/* Pushes a tensor that uses host memory without copying.  strides in
   elements, NULL for contiguous.  release(ud) is called exactly once: when
   the last tensor viewing this memory is collected, or at once if the push
   fails (a push with bad arguments raises a Lua error).  release may be NULL
   when the host keeps the memory alive for the state's whole life. */
void ltensor_push_external(lua_State *L, void *data, ltensor_dtype dtype,
                           int ndim, const int64_t *shape, const int64_t *strides,
                           void (*release)(void *ud), void *ud);

/* 1 and *info filled if the value at idx is a tensor, else 0; never raises.
   The pointers stay valid while the tensor is reachable. */
int ltensor_get(lua_State *L, int idx, ltensor_info *info);

/* Size in bytes of one element of dtype (0 for an invalid dtype). */
size_t ltensor_itemsize(ltensor_dtype dtype);

/* Name of dtype ("float32"), or NULL for an invalid dtype. */
const char *ltensor_dtype_name(ltensor_dtype dtype);

#endif
