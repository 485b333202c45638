/* l_reduce.c -- placeholder until this area lands. */
#include "lt_lua.h"
const lt_reg lt_reg_reduce[] = { {NULL, NULL, 0, NULL} };
