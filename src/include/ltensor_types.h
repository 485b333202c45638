/*
 * ltensor_types.h -- the Lua-free half of the public C API (src/include/ltensor.h
 * includes it): version, dtype enum, tensor description, dtype queries.
 * The C core (src/core/lt_*) builds on this header alone, never on lua.h.
 */
#ifndef LTENSOR_TYPES_H
#define LTENSOR_TYPES_H

#include <stddef.h>
#include <stdint.h>

#define LTENSOR_VERSION_MAJOR 0
#define LTENSOR_VERSION_MINOR 1
#define LTENSOR_VERSION_PATCH 0
#define LTENSOR_VERSION_NUM \
  (LTENSOR_VERSION_MAJOR * 10000 + LTENSOR_VERSION_MINOR * 100 + LTENSOR_VERSION_PATCH)

/* Maximum number of dimensions of a tensor. */
#define LTENSOR_MAX_DIMS 16

/* The 16 element types.  The order is the promotion lattice's reading order
   and matches the internal dtype list LT_DTYPE_LIST (lt_dtype.c checks, at
   compile time, each name's position). */
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

/* Size in bytes of one element of dtype (0 for an invalid dtype). */
size_t ltensor_itemsize(ltensor_dtype dtype);

/* Name of dtype ("float32"), or NULL for an invalid dtype. */
const char *ltensor_dtype_name(ltensor_dtype dtype);

#endif
