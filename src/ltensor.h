/*
 * ltensor.h -- kept at this path for hosts that compile with -Isrc (SPEC §9):
 * the public C API lives in src/include/ (ltensor.h, ltensor_types.h), which
 * is also what `make install` copies to $(PREFIX)/include.
 */
#include "include/ltensor.h"
