/*
 * l_compat.h -- the Lua 5.4 C API on Lua 5.1, 5.2, 5.3 and LuaJIT 2.1
 * (issue 12, SPEC §11).
 *
 * The binding (src/binding/l_*.c, ltensor_open.c, the CLI) is written against Lua
 * 5.4; this header, included after the Lua headers (l_lua.h does it), maps
 * every 5.4 call it uses onto the older APIs, so that one source builds for
 * every host.  On 5.4 it defines nothing but the helpers named ltc_* below.
 * Ideas borrowed from lua-compat-5.3 (MIT, Kepler Project); the code is our
 * own, smaller, and covers what ltensor uses:
 *
 *  - functions whose 5.3+ form returns the value's type (lua_getfield,
 *    lua_rawgeti, lua_getglobal, lua_gettable, lua_rawget, lua_rawgetp,
 *    luaL_getmetafield) return it here too;
 *  - user values: lua_newuserdatauv(L, size, n) with n > 0 gives the
 *    userdata one table (5.1: its environment, lua_setfenv; 5.2/5.3: its
 *    user value) whose slots 1..n are the n user values of 5.4;
 *    lua_get/setiuservalue read and write that table;
 *  - numbers: before 5.3 there is no integer subtype.  A number that is
 *    whole-valued and within int64's range counts as an integer
 *    (lua_isinteger, lua_tointegerx), any other as a float: the rule for
 *    weak scalars that README.md documents.  lua_Integer is ptrdiff_t
 *    there (64 bits on every platform we build for), but a value pushed to
 *    Lua becomes a double, exact only up to 2^53;
 *  - lua_pushfstring/lua_pushvfstring/luaL_error understand 5.4's %I and
 *    %U and print %f as 5.4 does ("2.0"), where the old ones do not;
 *  - lua_gc takes 5.4's variable argument list;
 *  - which metamethods the host calls: ltc_has_metamethod("__idiv").
 */
#ifndef L_COMPAT_H
#define L_COMPAT_H

#include <lua.h>
#include <lauxlib.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdarg.h>
#include <string.h>
#include <errno.h>
#include <math.h>

#if !defined(LUA_VERSION_NUM) || LUA_VERSION_NUM < 501 || LUA_VERSION_NUM > 504
#error "ltensor builds for Lua 5.1, 5.2, 5.3, 5.4 and LuaJIT 2.1"
#endif

/* The host: 5.1 for both PUC Lua 5.1 and LuaJIT (LUA_VERSION_NUM 501). */
#define LTC_LUA_VERSION_NUM LUA_VERSION_NUM

/* Bits a Lua number holds exactly as an integer mask: 62 with the integer
   subtype, 52 when numbers are doubles (5.1, 5.2, LuaJIT). */
#if LUA_VERSION_NUM >= 503
#define LTC_MASK_BITS 62
#else
#define LTC_MASK_BITS 52
#endif

/* Metamethods the host's VM calls: 5.3 added // and the bitwise ones, 5.4
   __close.  Registering the others is harmless but would suggest `a // b`
   works; on older hosts these stay methods only (floor_divide,
   bitwise_and ...). */
static inline int ltc_has_metamethod(const char *name) {
#if LUA_VERSION_NUM < 503
  static const char *const v53[] = {"__idiv", "__band", "__bor", "__bxor", "__shl", "__shr", "__bnot", NULL};
  for (const char *const *p = v53; *p; p++)
    if (strcmp(name, *p) == 0) return 0;
#endif
#if LUA_VERSION_NUM < 504
  if (strcmp(name, "__close") == 0) return 0;
#endif
  (void)name;
  return 1;
}

/* ======================================================================= */
#if LUA_VERSION_NUM < 503

#ifndef LUA_OK
#define LUA_OK 0
#endif
#define LUA_MAXINTEGER PTRDIFF_MAX
#define LUA_MININTEGER PTRDIFF_MIN
#ifndef LUA_LOADED_TABLE
#define LUA_LOADED_TABLE "_LOADED"
#endif

/* a float -> integer conversion that fails (0) outside lua_Integer's range */
#define lua_numbertointeger(n, p)                                              \
  ((n) >= (lua_Number)(LUA_MININTEGER) && (n) < -(lua_Number)(LUA_MININTEGER) \
   && (*(p) = (lua_Integer)(n), 1))

/* ---- 5.1 only (PUC 5.1 and LuaJIT) ---- */
#if LUA_VERSION_NUM == 501
#define LTC_REGISTRY_OK(i) ((i) > 0 || (i) <= LUA_REGISTRYINDEX)
static inline int ltc_absindex(lua_State *L, int i) {
  return LTC_REGISTRY_OK(i) ? i : lua_gettop(L) + i + 1;
}
#define lua_absindex ltc_absindex
#define lua_rawlen(L, i) lua_objlen((L), (i))

static inline lua_Number ltc_tonumberx(lua_State *L, int i, int *isnum) {
  lua_Number n = lua_tonumber(L, i);
  if (isnum) *isnum = (n != 0 || lua_isnumber(L, i));
  return n;
}
#define lua_tonumberx ltc_tonumberx

static inline void ltc_rawgetp_void(lua_State *L, int i, const void *p) {
  i = ltc_absindex(L, i);
  lua_pushlightuserdata(L, (void *)p);
  lua_rawget(L, i);
}
static inline void ltc_rawsetp(lua_State *L, int i, const void *p) {
  i = ltc_absindex(L, i);
  lua_pushlightuserdata(L, (void *)p);
  lua_insert(L, -2);
  lua_rawset(L, i);
}
#define lua_rawsetp ltc_rawsetp

static inline void ltc_setfuncs(lua_State *L, const luaL_Reg *l, int nup) {
  luaL_checkstack(L, nup + 1, "too many upvalues");
  for (; l->name; l++) {
    for (int i = 0; i < nup; i++) lua_pushvalue(L, -nup);
    lua_pushcclosure(L, l->func, nup);
    lua_setfield(L, -(nup + 2), l->name);
  }
  lua_pop(L, nup);
}
#define luaL_setfuncs ltc_setfuncs
#ifndef luaL_newlibtable
#define luaL_newlibtable(L, l) lua_createtable((L), 0, (int)(sizeof(l) / sizeof((l)[0]) - 1))
#endif
#ifndef luaL_newlib
#define luaL_newlib(L, l) (luaL_newlibtable((L), (l)), luaL_setfuncs((L), (l), 0))
#endif

static inline void *ltc_testudata(lua_State *L, int i, const char *tname) {
  void *p = lua_touserdata(L, i);
  if (!p || !lua_getmetatable(L, i)) return NULL;
  lua_getfield(L, LUA_REGISTRYINDEX, tname);
  if (!lua_rawequal(L, -1, -2)) p = NULL;
  lua_pop(L, 2);
  return p;
}
#define luaL_testudata ltc_testudata

static inline void ltc_setmetatable(lua_State *L, const char *tname) {
  lua_getfield(L, LUA_REGISTRYINDEX, tname);
  lua_setmetatable(L, -2);
}
#define luaL_setmetatable ltc_setmetatable

static inline lua_Integer ltc_len(lua_State *L, int i) {
  i = ltc_absindex(L, i);
  if (luaL_callmeta(L, i, "__len")) {
    int isnum;
    lua_Number n = ltc_tonumberx(L, -1, &isnum);
    lua_pop(L, 1);
    if (!isnum) luaL_error(L, "object length is not an integer");
    return (lua_Integer)n;
  }
  return (lua_Integer)lua_objlen(L, i);
}
#define luaL_len ltc_len

static inline int ltc_getsubtable(lua_State *L, int i, const char *name) {
  i = ltc_absindex(L, i);
  lua_getfield(L, i, name);
  if (lua_type(L, -1) == LUA_TTABLE) return 1;
  lua_pop(L, 1);
  lua_newtable(L);
  lua_pushvalue(L, -1);
  lua_setfield(L, i, name);
  return 0;
}
#define luaL_getsubtable ltc_getsubtable

static inline void ltc_requiref(lua_State *L, const char *modname, lua_CFunction openf, int glb) {
  luaL_checkstack(L, 3, "not enough stack slots");
  ltc_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_getfield(L, -1, modname);
  if (!lua_toboolean(L, -1)) {
    lua_pop(L, 1);
    lua_pushcfunction(L, openf);
    lua_pushstring(L, modname);
    lua_call(L, 1, 1);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, modname);
  }
  lua_remove(L, -2);
  if (glb) {
    lua_pushvalue(L, -1);
    lua_setglobal(L, modname);
  }
}
#define luaL_requiref ltc_requiref

/* debug.traceback does the walk (L1 must be L, as in ltensor's uses) */
static inline void ltc_traceback(lua_State *L, lua_State *L1, const char *msg, int level) {
  (void)L1;
  lua_getglobal(L, "debug");
  if (lua_type(L, -1) == LUA_TTABLE) {
    lua_getfield(L, -1, "traceback");
    lua_remove(L, -2);
    if (lua_type(L, -1) == LUA_TFUNCTION) {
      if (msg) lua_pushstring(L, msg); else lua_pushnil(L);
      lua_pushinteger(L, level + 1);   /* + 1: the traceback function's own level */
      if (lua_pcall(L, 2, 1, 0) == 0 && lua_type(L, -1) == LUA_TSTRING) return;
    }
  }
  lua_pop(L, 1);
  lua_pushstring(L, msg ? msg : "");
}
#define luaL_traceback ltc_traceback

static inline int ltc_fileresult(lua_State *L, int stat, const char *fname) {
  int en = errno;
  if (stat) { lua_pushboolean(L, 1); return 1; }
  lua_pushnil(L);
  if (fname) lua_pushfstring(L, "%s: %s", fname, strerror(en));
  else lua_pushstring(L, strerror(en));
  lua_pushinteger(L, en);
  return 3;
}
#define luaL_fileresult ltc_fileresult

#define luaL_loadbufferx(L, b, sz, name, mode) ((void)(mode), luaL_loadbuffer((L), (b), (sz), (name)))
/* luaopen_* starts with luaL_checkversion: on the 5.1 API it also pins the
   module in memory.  LuaJIT's lua_close finalizes in rounds: a userdata
   given a finalizer while the first round runs (ltensor's end-of-cycle
   sentinel re-arms itself, l_tensor.c) is finalized in the next round, after
   the round that unloaded the C library (package's __gc on the handle), and
   would call unmapped code.  With RTLD_NODELETE the code stays mapped until
   the process exits (the finalizer then finds the allocator closed and
   returns).  Lua 5.4 needs no pin: it finalizes nothing created during
   lua_close. */
#if defined(__unix__) || defined(__APPLE__)
#include <dlfcn.h>
static inline void ltc_pin_module(void) {
  Dl_info info;
  if (dladdr((void *)&ltc_pin_module, &info) && info.dli_fname)
    (void)dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}
#else
static inline void ltc_pin_module(void) {}
#endif
#define luaL_checkversion(L) ((void)(L), ltc_pin_module())

/* the io library's file handle: FILE * first (5.1's FILE **, LuaJIT's
   IOFileUD); a closed file has f == NULL.  No closef field: read only f,
   through ltc_stream_open. */
typedef struct luaL_Stream {
  FILE *f;
} luaL_Stream;
#define ltc_stream_open(s) ((s)->f != NULL)
#ifndef LUA_FILEHANDLE
#define LUA_FILEHANDLE "FILE*"
#endif
typedef size_t lua_Unsigned;

/* user values: the userdata's environment table */
#define ltc_getuv_raw(L, i) lua_getfenv((L), (i))
#define ltc_setuv_raw(L, i) lua_setfenv((L), (i))

#else /* ---- 5.2 only ---- */

static inline void ltc_rawgetp_void(lua_State *L, int i, const void *p) { lua_rawgetp(L, i, p); }
#define ltc_stream_open(s) ((s)->closef != NULL && (s)->f != NULL)
#define ltc_getuv_raw(L, i) lua_getuservalue((L), (i))
#define ltc_setuv_raw(L, i) lua_setuservalue((L), (i))
#endif /* 5.1 / 5.2 */

/* 5.1 and 5.2 keep package.preload in the package table only (no
   LUA_PRELOAD_TABLE in the registry); 5.1's luaL_getsubtable is ltc's */
static inline void ltc_getpreload(lua_State *L) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  luaL_getsubtable(L, -1, "package");
  luaL_getsubtable(L, -1, "preload");
  lua_remove(L, -2);
  lua_remove(L, -2);
}

/* ---- 5.1 and 5.2: getters return the type, integers, strings ---- */
static inline int ltc_getfield(lua_State *L, int i, const char *k) {
  lua_getfield(L, i, k);
  return lua_type(L, -1);
}
static inline int ltc_gettable(lua_State *L, int i) {
  lua_gettable(L, i);
  return lua_type(L, -1);
}
static inline int ltc_rawget(lua_State *L, int i) {
  lua_rawget(L, i);
  return lua_type(L, -1);
}
static inline int ltc_rawgeti(lua_State *L, int i, lua_Integer n) {
  lua_rawgeti(L, i, (int)n);
  return lua_type(L, -1);
}
static inline int ltc_rawgetp(lua_State *L, int i, const void *p) {
  ltc_rawgetp_void(L, i, p);
  return lua_type(L, -1);
}
static inline int ltc_getglobal(lua_State *L, const char *name) {
#if LUA_VERSION_NUM == 501
  lua_getfield(L, LUA_GLOBALSINDEX, name);
#else
  lua_getglobal(L, name);
#endif
  return lua_type(L, -1);
}
static inline int ltc_geti(lua_State *L, int i, lua_Integer n) {
  i = lua_absindex(L, i);
  lua_pushinteger(L, n);
  lua_gettable(L, i);
  return lua_type(L, -1);
}
static inline void ltc_seti(lua_State *L, int i, lua_Integer n) {
  i = lua_absindex(L, i);
  lua_pushinteger(L, n);
  lua_insert(L, -2);
  lua_settable(L, i);
}
static inline int ltc_getmetafield(lua_State *L, int obj, const char *e) {
  return luaL_getmetafield(L, obj, e) ? lua_type(L, -1) : LUA_TNIL;
}
/* 5.3 names the type in the metatable; error messages read __name */
static inline int ltc_newmetatable(lua_State *L, const char *tname) {
  if (!luaL_newmetatable(L, tname)) return 0;
  lua_pushstring(L, tname);
  lua_setfield(L, -2, "__name");
  return 1;
}

/* No integer subtype: a number is an integer when it is whole-valued and
   within lua_Integer's range (README: "numbers on older hosts").  Negative
   zero is a float: an integer has no sign bit to keep, and -0.0 must reach
   a float tensor as -0.0 (1 / x is -inf).  (lua_tointegerx still converts
   it to 0, as 5.4 converts the float -0.0.) */
static inline int ltc_isinteger(lua_State *L, int i) {
  if (lua_type(L, i) != LUA_TNUMBER) return 0;
  lua_Number n = lua_tonumber(L, i);
  lua_Integer v;
  return n == floor(n) && !(n == 0 && signbit(n)) && lua_numbertointeger(n, &v);
}
/* 5.3's rule: numbers (and numeric strings) with an exact integer value */
static inline lua_Integer ltc_tointegerx(lua_State *L, int i, int *isnum) {
  lua_Integer v = 0;
  int ok = 0;
  if (lua_isnumber(L, i)) {
    lua_Number n = lua_tonumber(L, i);
    ok = n == floor(n) && lua_numbertointeger(n, &v);
    if (!ok) v = 0;
  }
  if (isnum) *isnum = ok;
  return v;
}

static inline void ltc_rotate(lua_State *L, int idx, int n) {
  idx = lua_absindex(L, idx);
  int len = lua_gettop(L) - idx + 1;
  if (len <= 0) return;
  n %= len;
  if (n < 0) n += len;
  for (int k = 0; k < n; k++) lua_insert(L, idx);   /* the top moves to idx */
}

/* 5.4's lua_pushvfstring: %s %d %I %f %p %c %U %% ("%f" as tostring prints
   a float: "2.0") */
static inline const char *ltc_pushvfstring(lua_State *L, const char *fmt, va_list ap) {
  luaL_Buffer b;
  char tmp[64];
  luaL_buffinit(L, &b);
  for (const char *p = fmt; *p; p++) {
    if (*p != '%') { luaL_addchar(&b, *p); continue; }
    switch (*++p) {
      case 's': { const char *s = va_arg(ap, const char *); luaL_addstring(&b, s ? s : "(null)"); break; }
      case 'd': snprintf(tmp, sizeof tmp, "%d", va_arg(ap, int)); luaL_addstring(&b, tmp); break;
      case 'I': snprintf(tmp, sizeof tmp, "%lld", (long long)va_arg(ap, lua_Integer)); luaL_addstring(&b, tmp); break;
      case 'f': {
        double d = va_arg(ap, double);
        int n = snprintf(tmp, sizeof tmp - 2, "%.14g", d);
        if (n > 0 && tmp[strspn(tmp, "-0123456789")] == '\0') { tmp[n] = '.'; tmp[n + 1] = '0'; tmp[n + 2] = '\0'; }
        luaL_addstring(&b, tmp);
        break;
      }
      case 'p': snprintf(tmp, sizeof tmp, "%p", va_arg(ap, void *)); luaL_addstring(&b, tmp); break;
      case 'c': luaL_addchar(&b, (char)va_arg(ap, int)); break;
      case 'U': {
        unsigned long x = (unsigned long)va_arg(ap, long);
        char u[8];
        int n = 0;
        if (x < 0x80) u[n++] = (char)x;
        else if (x < 0x800) { u[n++] = (char)(0xC0 | (x >> 6)); u[n++] = (char)(0x80 | (x & 0x3F)); }
        else if (x < 0x10000) { u[n++] = (char)(0xE0 | (x >> 12)); u[n++] = (char)(0x80 | ((x >> 6) & 0x3F)); u[n++] = (char)(0x80 | (x & 0x3F)); }
        else { u[n++] = (char)(0xF0 | ((x >> 18) & 0x07)); u[n++] = (char)(0x80 | ((x >> 12) & 0x3F)); u[n++] = (char)(0x80 | ((x >> 6) & 0x3F)); u[n++] = (char)(0x80 | (x & 0x3F)); }
        luaL_addlstring(&b, u, (size_t)n);
        break;
      }
      case '%': luaL_addchar(&b, '%'); break;
      case '\0': p--; break;   /* a lone '%' at the end */
      default: luaL_addchar(&b, '%'); luaL_addchar(&b, *p); break;
    }
  }
  luaL_pushresult(&b);
  return lua_tostring(L, -1);
}
static inline const char *ltc_pushfstring(lua_State *L, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const char *s = ltc_pushvfstring(L, fmt, ap);
  va_end(ap);
  return s;
}
static inline int ltc_error(lua_State *L, const char *fmt, ...) {
  va_list ap;
  luaL_where(L, 1);
  va_start(ap, fmt);
  ltc_pushvfstring(L, fmt, ap);
  va_end(ap);
  lua_concat(L, 2);
  return lua_error(L);
}

static inline const char *ltc_tolstring(lua_State *L, int idx, size_t *len) {
  idx = lua_absindex(L, idx);
  if (luaL_callmeta(L, idx, "__tostring")) {
    if (!lua_isstring(L, -1)) luaL_error(L, "'__tostring' must return a string");
  } else {
    switch (lua_type(L, idx)) {
      case LUA_TNUMBER: case LUA_TSTRING: lua_pushvalue(L, idx); break;
      case LUA_TBOOLEAN: lua_pushstring(L, lua_toboolean(L, idx) ? "true" : "false"); break;
      case LUA_TNIL: lua_pushliteral(L, "nil"); break;
      default: {
        int tt = ltc_getmetafield(L, idx, "__name");
        const char *kind = tt == LUA_TSTRING ? lua_tostring(L, -1) : luaL_typename(L, idx);
        ltc_pushfstring(L, "%s: %p", kind, lua_topointer(L, idx));
        if (tt != LUA_TNIL) lua_remove(L, -2);
        break;
      }
    }
  }
  return lua_tolstring(L, -1, len);
}

#undef lua_getglobal
#define lua_getfield ltc_getfield
#define lua_gettable ltc_gettable
#define lua_rawget ltc_rawget
#define lua_rawgeti ltc_rawgeti
#define lua_rawgetp ltc_rawgetp
#define lua_getglobal ltc_getglobal
#define lua_geti ltc_geti
#define lua_seti ltc_seti
#define luaL_getmetafield ltc_getmetafield
#define luaL_newmetatable ltc_newmetatable
#undef lua_isinteger
#define lua_isinteger ltc_isinteger
#undef lua_tointeger
#undef lua_tointegerx
#define lua_tointegerx ltc_tointegerx
#define lua_tointeger(L, i) ltc_tointegerx((L), (i), NULL)
#define lua_rotate ltc_rotate
#undef lua_pushfstring
#undef lua_pushvfstring
#define lua_pushfstring ltc_pushfstring
#define lua_pushvfstring ltc_pushvfstring
#undef luaL_error
#define luaL_error ltc_error
#undef luaL_tolstring
#define luaL_tolstring ltc_tolstring

/* ======================================================================= */
#else /* 5.3 and 5.4 */

static inline void ltc_getpreload(lua_State *L) { luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE); }
/* an io library file handle that is still open */
#define ltc_stream_open(s) ((s)->closef != NULL && (s)->f != NULL)


#endif /* < 5.3 */

/* ---- before 5.4: user values, lua_gc ---- */
#if LUA_VERSION_NUM < 504
#if LUA_VERSION_NUM == 503
#define ltc_getuv_raw(L, i) lua_getuservalue((L), (i))
#define ltc_setuv_raw(L, i) lua_setuservalue((L), (i))
#endif
/* user values (see the top of this file): one table, the userdata's
   environment (5.1) or user value (5.2, 5.3) */
static inline void *ltc_newuserdatauv(lua_State *L, size_t sz, int nuv) {
  void *p = lua_newuserdata(L, sz);
  if (nuv > 0) {
    lua_createtable(L, nuv, 0);
    ltc_setuv_raw(L, -2);
  }
  return p;
}
static inline int ltc_getiuservalue(lua_State *L, int idx, int n) {
  ltc_getuv_raw(L, idx);
  if (lua_type(L, -1) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_pushnil(L);
    return LUA_TNONE;
  }
  lua_rawgeti(L, -1, n);
  lua_remove(L, -2);
  return lua_type(L, -1);
}
static inline int ltc_setiuservalue(lua_State *L, int idx, int n) {
  idx = lua_absindex(L, idx);
  ltc_getuv_raw(L, idx);
  if (lua_type(L, -1) != LUA_TTABLE) {
    lua_pop(L, 2);
    return 0;
  }
  lua_insert(L, -2);
  lua_rawseti(L, -2, n);
  lua_pop(L, 1);
  return 1;
}
#define lua_newuserdatauv ltc_newuserdatauv
#define lua_getiuservalue ltc_getiuservalue
#define lua_setiuservalue ltc_setiuservalue
/* 5.4's lua_gc(L, what, ...): the older ones take exactly one data argument */
#define LTC_GC3(L, what, data, ...) (lua_gc)((L), (what), (data))
#define lua_gc(...) LTC_GC3(__VA_ARGS__, 0, 0)
#endif /* < 5.4 */

#endif
