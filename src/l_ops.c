/* l_ops.c -- placeholder until this area lands. */
#include "lt_lua.h"
const lt_reg lt_reg_ops[] = { {NULL, NULL, 0, NULL} };
