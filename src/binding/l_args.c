/* l_args.c -- argument checking and the binding's error style: every error
   raised by ltensor begins with "ltensor.<function>: " (ltl_error). */
#include <stdarg.h>
#include <stdlib.h>
#include <ctype.h>
#include <string.h>
#include "l_lua.h"

static const char *running_name(lua_State *L, lua_Debug *ar);

/* An internal entry point ("_csv_parse") is called by the library's own Lua
   code only, so its errors name the public function it works for. */
static const char *const internal_names[][2] = {
  {"_csv_parse", "read_csv"}, {"_csv_format", "write_csv"},
  {"_png_decode", "load_image"}, {"_png_encode", "save_image"},
  {"_lapack_getrf", "linalg.lu_factor"}, {"_lapack_getrs", "linalg.lu_solve"},
  {"_lapack_perm", "linalg.lu"}, {"_lapack_solve", "linalg.solve"},
  {"_lapack_potrf", "linalg.cholesky"}, {"_lapack_qr", "linalg.qr"},
  {"_lapack_geqrf", "geqrf"}, {"_lapack_orgqr", "orgqr"}, {"_lapack_syevd", "linalg.eigh"},
  {"_lapack_geev", "linalg.eig"}, {"_lapack_gesdd", "linalg.svd"}, {"_lapack_gels", "linalg.lstsq"},
  {"_lapack_trsm", "linalg.solve_triangular"},
  {"_conv_small", "conv2d"}, {"_conv_big", "conv_transpose2d"}, {"_conv_wgrad", "conv2d"},
  {"_max_pool2d", "max_pool2d"}, {"_adaptive_max_pool2d", "adaptive_max_pool2d"},
  {"_avg_pool2d", "avg_pool2d"}, {"_adaptive_avg_pool2d", "adaptive_avg_pool2d"},
  {"_interp", "interpolate"}, {"_rnn_mm", "lstm"}, {"_rnn_forward", "lstm"},
  {"_norm_rows", "layer_norm"}, {"_norm_chan", "batch_norm"}, {"_norm_chan_eval", "batch_norm"},
  {"_xent", "cross_entropy"}, {"_linear", "linear"}, {"_max", "max"}, {"_min", "min"},
  {NULL, NULL}};
static int is_internal(const char *name) { return name[0] == '_' && name[1] != '_'; }
/* A metamethod reports the op's name: a + b fails in "add", not "__add". */
static const char *const meta_names[][2] = {
  {"__add", "add"}, {"__sub", "sub"}, {"__mul", "mul"}, {"__div", "div"}, {"__mod", "remainder"},
  {"__idiv", "floor_divide"}, {"__pow", "pow"}, {"__unm", "neg"}, {"__band", "bitwise_and"},
  {"__bor", "bitwise_or"}, {"__bxor", "bitwise_xor"}, {"__shl", "bitwise_left_shift"},
  {"__shr", "bitwise_right_shift"}, {"__bnot", "bitwise_not"}, {"__index", "index"},
  {"__newindex", "setindex"}, {"__eq", "eq"}, {"__lt", "lt"}, {"__le", "le"}, {"__concat", "cat"},
  {NULL, NULL}};
static const char *public_name(const char *name) {
  const char *const (*table)[2] = is_internal(name) ? internal_names
                                : name[0] == '_' && name[1] == '_' ? meta_names : NULL;
  if (table)
    for (int i = 0; table[i][0]; i++)
      if (strcmp(name, table[i][0]) == 0) return table[i][1];
  return name;
}

/* The public function the user called, while a function composed of other
   ops runs (lua/ltensor/tensor/common.lua's `named`: tensordot over mm,
   repeat over empty ...): the errors of the ops it calls are raised in its
   name, as PyTorch's would be.  A Lua string at this registry key, set and
   restored around the call by T._set_public_name. */
static const char key_public = 'p';

/* T._public_name() -> the name set, or nil */
static int l_public_name(lua_State *L) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &key_public);
  return 1;
}
/* T._set_public_name(name or nil) -> the previous one */
static int l_set_public_name(lua_State *L) {
  if (!lua_isnoneornil(L, 1)) ltl_checklstring(L, 1, NULL);
  lua_settop(L, 1);
  lua_rawgetp(L, LUA_REGISTRYINDEX, &key_public);
  lua_pushvalue(L, 1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &key_public);
  return 1;
}

/* No "file:line:" prefix: the position luaL_where gives is that of the
   function's Lua caller, which is often the library's own code (a C function
   called from lua/ltensor/), and the Lua side's errors (ltensor.util) carry
   none either.  The message names the function; the traceback says where. */
int ltl_error(lua_State *L, const char *fname, const char *fmt, ...) {
  va_list ap;
  int pub = lua_rawgetp(L, LUA_REGISTRYINDEX, &key_public) == LUA_TSTRING;
  if (pub) fname = lua_tostring(L, -1);   /* stays on the stack, below the message */
  else lua_pop(L, 1);
  va_start(ap, fmt);
  lua_pushfstring(L, "ltensor.%s: ", fname);
  lua_pushvfstring(L, fmt, ap);
  va_end(ap);
  lua_concat(L, 2);
  return lua_error(L);
}

/* ---- argument errors ------------------------------------------------------
   Lua's luaL_argerror says "bad argument #1 to 'add' (...)"; ltensor's errors
   all start "ltensor.<function>: ", so argument errors read
   "ltensor.add: bad argument #1 (...)".  The function's name is the one it
   was registered under (l_core.c keeps a closure -> name table), so it is
   right however the function was reached (T.add, t:add, a local, the
   autograd hook); else the name Lua's debug info gives, else "?".  As in
   Lua, a method call (t:f(x)) counts self out: x is argument #1. */
static const char *running_name(lua_State *L, lua_Debug *ar) {
  if (!lua_getstack(L, 0, ar)) return "?";
  lua_getinfo(L, "nf", ar);                        /* pushes the running function */
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &ltl_key_names) == LUA_TTABLE) {
    lua_pushvalue(L, -2);
    if (lua_rawget(L, -2) == LUA_TSTRING) return lua_tostring(L, -1);   /* stays on the stack */
    lua_pop(L, 1);
  }
  lua_pop(L, 2);
  return ar->name ? ar->name : "?";
}

const char *ltl_running_name(lua_State *L) {
  lua_Debug ar;
  return public_name(running_name(L, &ar));
}

/* x.size(1) for x:size(1): called through a field (namewhat "field", as
   x.f or T.f; Lua's debug info cannot tell which table it came from), the
   arguments are shifted one to the left, so the tensor slot idx holds what
   was meant for the next one: argument #1 is not a tensor, or argument #2 is
   missing after a lone argument (x.add(y) passes y as self).  The error is
   raised either way; this only adds what to write. */
int ltl_dot_called(lua_State *L, int idx) {
  lua_Debug ar;
  if (!lua_getstack(L, 0, &ar) || !lua_getinfo(L, "n", &ar)) return 0;
  if (!ar.namewhat || strcmp(ar.namewhat, "field") != 0) return 0;
  if (idx == 1) return ltl_test(L, 1) == NULL;
  return idx == 2 && lua_gettop(L) == 1;
}

int ltl_argerror(lua_State *L, int arg, const char *msg) {
  lua_Debug ar;
  const char *fname = public_name(running_name(L, &ar));
  if (ar.namewhat && strcmp(ar.namewhat, "method") == 0) {
    arg--;
    if (arg == 0) return ltl_error(L, fname, "bad self (%s)", msg);
  }
  return ltl_error(L, fname, "bad argument #%d (%s)", arg, msg);
}

int ltl_typeerror(lua_State *L, int arg, const char *tname) {
  const char *typearg;
  if (luaL_getmetafield(L, arg, "__name") == LUA_TSTRING) typearg = lua_tostring(L, -1);
  else if (lua_type(L, arg) == LUA_TLIGHTUSERDATA) typearg = "light userdata";
  else typearg = luaL_typename(L, arg);
  return ltl_argerror(L, arg, lua_pushfstring(L, "%s expected, got %s", tname, typearg));
}

static void tag_error(lua_State *L, int arg, int tag) { ltl_typeerror(L, arg, lua_typename(L, tag)); }

void ltl_checktype(lua_State *L, int arg, int t) {
  if (lua_type(L, arg) != t) tag_error(L, arg, t);
}

void ltl_checkany(lua_State *L, int arg) {
  if (lua_type(L, arg) == LUA_TNONE) ltl_argerror(L, arg, "value expected");
}

/* Numbers only: Lua's own checks convert "3" to 3, but PyTorch takes no
   strings for numbers, and a string here is usually an argument slip. */
lua_Integer ltl_checkinteger(lua_State *L, int arg) {
  if (lua_type(L, arg) != LUA_TNUMBER) tag_error(L, arg, LUA_TNUMBER);
  int isnum;
  lua_Integer d = lua_tointegerx(L, arg, &isnum);
  if (!isnum) {
    if (lua_isnumber(L, arg)) ltl_argerror(L, arg, "number has no integer representation");
    else tag_error(L, arg, LUA_TNUMBER);
  }
  return d;
}

lua_Integer ltl_optinteger(lua_State *L, int arg, lua_Integer def) {
  return lua_isnoneornil(L, arg) ? def : ltl_checkinteger(L, arg);
}

lua_Number ltl_checknumber(lua_State *L, int arg) {
  if (lua_type(L, arg) != LUA_TNUMBER) tag_error(L, arg, LUA_TNUMBER);
  int isnum;
  lua_Number d = lua_tonumberx(L, arg, &isnum);
  if (!isnum) tag_error(L, arg, LUA_TNUMBER);
  return d;
}

lua_Number ltl_optnumber(lua_State *L, int arg, lua_Number def) {
  return lua_isnoneornil(L, arg) ? def : ltl_checknumber(L, arg);
}

const char *ltl_checklstring(lua_State *L, int arg, size_t *len) {
  const char *s = lua_tolstring(L, arg, len);
  if (!s) tag_error(L, arg, LUA_TSTRING);
  return s;
}

void *ltl_checkudata(lua_State *L, int arg, const char *tname) {
  void *p = luaL_testudata(L, arg, tname);
  if (!p) ltl_typeerror(L, arg, tname);
  return p;
}

/* ---- dims and sizes --------------------------------------------------------- */
int ltl_checkdim(lua_State *L, lua_Integer dim, int ndim, const char *fname) {
  int n = ndim > 0 ? ndim : 1;  /* a 0-dim tensor accepts dims 1 and -1, as PyTorch's 0/-1 */
  if (dim >= 1 && dim <= n) return (int)(dim - 1);
  if (dim < 0 && dim >= -n) return (int)(n + dim);
  /* %I: a huge dim must not print truncated; 0 is the usual slip from
     0-based habits, so say how dims count here */
  return ltl_error(L, fname, "dimension out of range (expected to be in range of [%d, %d], but got %I)%s",
                  -n, n, (lua_Integer)dim, dim == 0 ? " (dims are 1-based: 1 is the first, -1 the last)" : "");
}

/* The element count ltl_push_new accepts (it raises beyond): checked here too,
   where the function's name is known. */
static void check_numel(lua_State *L, const int64_t *shape, int ndim, const char *fname) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) if (shape[i] == 0) return;
  for (int i = 0; i < ndim; i++) {
    if (n > INT64_MAX / 64 / shape[i]) ltl_error(L, fname, "tensor too large (dimension %d of size %I)",
                                                i + 1, (lua_Integer)shape[i]);
    n *= shape[i];
  }
}

static int checksize_raw(lua_State *L, int first, int last, int64_t *shape, const char *fname);
int ltl_checksize(lua_State *L, int first, int last, int64_t *shape, const char *fname) {
  /* no size at all (T.rand(), T.rand({dtype = ...}) once the options are
     split off) is a forgotten argument, as in PyTorch, not a 0-dim tensor:
     that one is asked for with {} */
  if (first > last || lua_type(L, first) == LUA_TNONE)
    ltl_error(L, fname, "missing required argument 'size' (integers or one table of integers; "
                        "{} for a 0-dim tensor)");
  int ndim = checksize_raw(L, first, last, shape, fname);
  check_numel(L, shape, ndim, fname);
  return ndim;
}

static int checksize_raw(lua_State *L, int first, int last, int64_t *shape, const char *fname) {
  int ndim = 0;
  if (first <= last && lua_type(L, first) == LUA_TTABLE) {
    /* raw reads: a __len or __index metamethod could run Lua code (free a
       tensor argument the caller already checked) in the middle of an op */
    lua_Integer n = (lua_Integer)lua_rawlen(L, first);
    /* a table with string keys here is an options table given where the
       sizes go (T.rand({dtype = ...})): not a 0-dim size */
    lua_pushnil(L);
    while (lua_next(L, first)) {
      lua_pop(L, 1);
      if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1 || lua_tointeger(L, -1) > n) {
        if (lua_type(L, -1) == LUA_TSTRING)
          ltl_error(L, fname, "size must be a table of integers (got the key '%s': options go after the sizes)",
                    lua_tostring(L, -1));
        ltl_error(L, fname, "size must be a list of integers (got a %s key)", luaL_typename(L, -1));
      }
    }
    if (n > LT_MAX_DIMS) ltl_error(L, fname, "too many dimensions (%d > %d)", (int)n, LT_MAX_DIMS);
    for (lua_Integer i = 1; i <= n; i++) {
      lua_rawgeti(L, first, i);
      int isnum;
      lua_Integer v = lua_tointegerx(L, -1, &isnum);
      if (!isnum) ltl_error(L, fname, "size must be a table of integers (element %d is %s)", (int)i,
                           luaL_typename(L, -1));
      if (v < 0) ltl_error(L, fname, "negative dimension %I", (lua_Integer)v);
      shape[ndim++] = v;
      lua_pop(L, 1);
    }
    return ndim;
  }
  for (int i = first; i <= last; i++) {
    /* sizes are integers, then at most one options table; trailing nils
       (an absent options argument) are fine after a size, but a size that
       is nil, a string or a boolean is a mistake, never a 0-dim tensor */
    int ty = lua_type(L, i);
    if (ty == LUA_TNONE) break;
    if (ty == LUA_TNIL && i > first) break;
    if (ty == LUA_TTABLE && i == last && i > first) break;   /* trailing options table */
    if (ty != LUA_TNUMBER)
      ltl_error(L, fname, "bad argument #%d (size expected: integers or one table of integers, got %s)",
                i, luaL_typename(L, i));
    if (ndim >= LT_MAX_DIMS) ltl_error(L, fname, "too many dimensions (more than %d)", LT_MAX_DIMS);
    lua_Integer v = ltl_checkinteger(L, i);
    if (v < 0) ltl_error(L, fname, "negative dimension %I", (lua_Integer)v);
    shape[ndim++] = v;
  }
  return ndim;
}

int ltl_opt_bool(lua_State *L, int idx, const char *field, int def) {
  if (idx == 0 || lua_type(L, idx) != LUA_TTABLE) return def;
  idx = lua_absindex(L, idx);
  lua_pushstring(L, field);   /* raw, as in ltl_opt_dtype */
  lua_rawget(L, idx);
  /* PyTorch's flags are bools: `requires_grad = 1` or `copy = "yes"` is a
     slip (1 would mean true, 0 too), not a value to coerce */
  if (!lua_isnil(L, -1) && !lua_isboolean(L, -1))
    ltl_argerror(L, idx, lua_pushfstring(L, "option '%s': boolean expected, got %s", field,
                                         luaL_typename(L, -1)));
  int v = lua_isnil(L, -1) ? def : lua_toboolean(L, -1);
  lua_pop(L, 1);
  return v;
}


/* ---- checked options tables ----------------------------------------------- */
/* Edit distance between two short keys (insert, delete, substitute, swap),
   ignoring case ('learningRate' is one edit from 'learningrate'). */
static int lower(int c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; }
static int key_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 31 || lb > 31) return 99;
  int d[32][32];
  for (size_t i = 0; i <= la; i++) d[i][0] = (int)i;
  for (size_t j = 0; j <= lb; j++) d[0][j] = (int)j;
  for (size_t i = 1; i <= la; i++)
    for (size_t j = 1; j <= lb; j++) {
      int c = d[i - 1][j - 1] + (lower(a[i - 1]) != lower(b[j - 1]));
      if (d[i - 1][j] + 1 < c) c = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < c) c = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1]) &&
          d[i - 2][j - 2] + 1 < c)
        c = d[i - 2][j - 2] + 1;
      d[i][j] = c;
    }
  return d[la][lb];
}

/* Names users bring from other libraries (Torch7, Keras, PyTorch's own
   positional names): suggested when the option they stand for is known.
   One list for every checker (the C ops and the Lua modules through
   T._check_opts), so optim's 'learning_rate' and a layer's 'epsilon' read
   alike. */
static const char *const OPT_ALIASES[][2] = {
  {"learning_rate", "lr"}, {"learningrate", "lr"}, {"rate", "lr"}, {"alpha_lr", "lr"},
  {"epsilon", "eps"}, {"beta1", "betas"}, {"beta2", "betas"}, {"beta", "betas"},
  {"wd", "weight_decay"}, {"decay", "weight_decay"}, {"l2", "weight_decay"},
  {"mom", "momentum"}, {"nesterov_momentum", "nesterov"}, {"maximise", "maximize"},
  {"ams_grad", "amsgrad"}, {"history", "history_size"}, {"line_search", "line_search_fn"},
  {"linesearch", "line_search_fn"}, {"type", "dtype"}, {"keepdims", "keepdim"}, {"axis", "dim"},
  {NULL, NULL}};

/* The known name to suggest for an unknown key k, or NULL: an alias, else
   the nearest name within max(2, #k / 3) edits. */
static const char *suggest_key(const char *k, const char *const *known) {
  for (int a = 0; OPT_ALIASES[a][0]; a++) {
    if (key_distance(k, OPT_ALIASES[a][0]) != 0) continue;
    for (const char *const *q = known; *q; q++)
      if (strcmp(*q, OPT_ALIASES[a][1]) == 0) return *q;
  }
  const char *best = NULL;
  int limit = (int)strlen(k) / 3, bestd;
  if (limit < 2) limit = 2;
  bestd = limit + 1;
  for (const char *const *q = known; *q; q++) {
    int dd = key_distance(k, *q);
    if (dd < bestd) { bestd = dd; best = *q; }
  }
  return best;
}

void ltl_check_opts(lua_State *L, int idx, const char *fname, const char *const *known) {
  if (idx == 0 || lua_type(L, idx) != LUA_TTABLE) return;
  idx = lua_absindex(L, idx);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TSTRING)
      ltl_error(L, fname, "options must have string keys (got a %s key)", luaL_typename(L, -1));
    const char *k = lua_tostring(L, -1);
    int found = 0;
    for (const char *const *q = known; *q; q++)
      if (strcmp(k, *q) == 0) { found = 1; break; }
    if (!found) {
      const char *best = suggest_key(k, known);
      if (best) ltl_error(L, fname, "unknown option '%s' (did you mean '%s'?)", k, best);
      if (!known[0]) ltl_error(L, fname, "unknown option '%s' (%s takes no options)", k, fname);
      luaL_Buffer b;
      luaL_buffinit(L, &b);
      for (const char *const *q = known; *q; q++) {
        if (q != known) luaL_addstring(&b, ", ");
        luaL_addstring(&b, *q);
      }
      luaL_pushresult(&b);
      ltl_error(L, fname, "unknown option '%s' (options: %s)", k, lua_tostring(L, -1));
    }
  }
}

/* No argument beyond max: trailing nils are absent arguments and pass, any
   other value is a slip that PyTorch would refuse ("takes N positional
   arguments") and must not be dropped silently. */
void ltl_check_nargs(lua_State *L, int max) {
  for (int i = lua_gettop(L); i > max; i--)
    if (!lua_isnil(L, i)) {
      const char *tn = luaL_getmetafield(L, i, "__name") == LUA_TSTRING ? lua_tostring(L, -1) : luaL_typename(L, i);
      ltl_argerror(L, i, lua_pushfstring(L, "unexpected extra argument (got %s)", tn));
    }
}

/* T._check_opts(fname, opts, known): the same check for the Lua modules
   (structural, distributions, ...), so that a typo'd key reads the same
   everywhere: "ltensor.<fname>: unknown option 'dtpye' (did you mean
   'dtype'?)".  known is a list of names or a set (name -> anything, as
   the Lua modules keep their defaults).  opts nil passes; anything else but
   a plain table raises.
   Returns opts.  The known names stay referenced by the table at 3, so the
   pointers taken from it live through the check. */
static int cmp_names(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}
static int check_opts_inner(lua_State *L) {
  const char *fname = lua_tostring(L, 1);
  enum { MAX_KNOWN = 1024 };   /* the REPL's hint passes every method name */
  const char *known[MAX_KNOWN + 1];
  int n = 0;
  for (lua_Integer i = 1; n < MAX_KNOWN; i++) {
    if (lua_rawgeti(L, 3, i) != LUA_TSTRING) { lua_pop(L, 1); break; }
    known[n++] = lua_tostring(L, -1);
    lua_pop(L, 1);
  }
  if (n == 0) {
    /* a set (name -> default, as the Lua modules keep their options): its
       string keys, sorted so that suggestions and lists do not depend on
       the table's order */
    lua_pushnil(L);
    while (n < MAX_KNOWN && lua_next(L, 3)) {
      lua_pop(L, 1);
      if (lua_type(L, -1) == LUA_TSTRING) known[n++] = lua_tostring(L, -1);
    }
    if (n == MAX_KNOWN) lua_pop(L, 1);   /* the key lua_next left */
    qsort(known, (size_t)n, sizeof known[0], cmp_names);
  }
  known[n] = NULL;
  ltl_check_opts(L, 2, fname, known);
  return 0;
}
static int l_check_opts(lua_State *L) {
  size_t len;
  const char *fname = ltl_checklstring(L, 1, &len);
  /* the name goes into the message as "ltensor.<fname>:": refuse what is
     not a function's name (the fuzzer passed random bytes) */
  int ok = len > 0 && len <= 128;
  for (size_t i = 0; ok && i < len; i++) {
    unsigned char c = (unsigned char)fname[i];
    ok = isgraph(c);   /* (the REPL's suggestions pass "?") */
  }
  if (!ok) ltl_argerror(L, 1, "a function's name expected (printable characters without spaces, at most 128)");
  ltl_checktype(L, 3, LUA_TTABLE);
  lua_settop(L, 3);
  if (lua_isnil(L, 2)) { lua_settop(L, 2); return 1; }
  /* called through a C frame so that the message carries no "file:line:"
     of the Lua module that checks (Lua modules raise at level 0) */
  lua_pushcfunction(L, check_opts_inner);
  lua_pushvalue(L, 1);
  lua_pushvalue(L, 2);
  lua_pushvalue(L, 3);
  if (lua_type(L, 2) != LUA_TTABLE || ltl_test(L, 2))
    return ltl_error(L, fname, "options must be a table (got %s)", ltl_test(L, 2) ? "a tensor" : luaL_typename(L, 2));
  lua_call(L, 3, 0);
  lua_settop(L, 2);
  return 1;
}

const ltl_reg ltl_reg_args[] = {
  {"_check_opts", l_check_opts, LT_MODULE, NULL},
  {"_public_name", l_public_name, LT_MODULE, NULL},
  {"_set_public_name", l_set_public_name, LT_MODULE, NULL},
  {NULL, NULL, 0, NULL}
};
