/*
 * l_csv.c -- the C half of T.read_csv / T.write_csv (lua/ltensor/utils/data.lua)
 * (the terminal test and clock of T.utils.progress are in l_progress.c).
 *
 *   T._csv_parse(text, delim, first_line, dtype, ncols [, cols]) -> 2-D tensor
 *       text: the file's data lines (the header already split off by Lua);
 *       first_line: the file's line number of text's first line (messages);
 *       ncols: fields every row must have; cols: 1-based columns to keep
 *       (default all).  dtype float32 parses with strtof, anything else
 *       with strtod into float64 (Lua converts).  Blank lines are skipped,
 *       CRLF accepted, fields may be padded with blanks or double-quoted,
 *       an empty field is NaN.  A field that is not a number raises
 *       "ltensor.read_csv: line L, column C: 'field' is not a number".
 *   T._csv_format(t, delim) -> string
 *       t: contiguous 2-D float32/float64/int64; one line per row, each
 *       float written with the fewest significant digits (down to 15 for
 *       float64, 6 for float32; up to 17/9) that read back to the same value,
 *       so 0.1 is "0.1", -0.0 is "-0", NaN "nan", infinities "inf"/"-inf".
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "l_lua.h"

/* A field [s, e) trimmed of blanks and one pair of double quotes. */
static void trim_field(const char **s, const char **e) {
  while (*s < *e && (**s == ' ' || **s == '\t')) (*s)++;
  while (*e > *s && ((*e)[-1] == ' ' || (*e)[-1] == '\t' || (*e)[-1] == '\r')) (*e)--;
  if (*e - *s >= 2 && **s == '"' && (*e)[-1] == '"') { (*s)++; (*e)--; }
}

static int field_error(lua_State *L, lua_Integer line, int col, const char *s, const char *e) {
  char buf[48];   /* lua_pushfstring has no %.*s */
  size_t len = (size_t)(e - s);
  if (len > 40) len = 40;
  memcpy(buf, s, len);
  buf[len] = 0;
  return ltl_error(L, "read_csv", "line %I, column %d: '%s' is not a number", (lua_Integer)line, col, buf);
}

/* Steps *p over the next line of text ending at end: the line is [*ls, *le)
   without its newline.  Returns 0 past the end, LINE_BLANK for a line of
   only spaces, tabs and CRs (both passes skip it), else LINE_DATA. */
enum { LINE_DATA = 1, LINE_BLANK };
static int next_line(const char **p, const char *end, const char **ls, const char **le) {
  if (*p >= end) return 0;
  const char *nl = memchr(*p, '\n', (size_t)(end - *p));
  *ls = *p;
  *le = nl ? nl : end;
  *p = nl ? nl + 1 : end;
  const char *s = *ls;
  while (s < *le && (*s == ' ' || *s == '\t' || *s == '\r')) s++;
  return s < *le ? LINE_DATA : LINE_BLANK;
}

/* Parse [s, e) as a number; 0 if it is not one.  The field is copied to a
   NUL-terminated buffer: strtod must not run past the field. */
static int parse_num(const char *s, const char *e, int as_float, double *d, float *f) {
  char buf[128];
  size_t len = (size_t)(e - s);
  if (len == 0) { *d = NAN; *f = NAN; return 1; }
  if (len >= sizeof buf) return 0;
  memcpy(buf, s, len);
  buf[len] = 0;
  char *end;
  errno = 0;
  if (as_float) *f = strtof(buf, &end);
  else *d = strtod(buf, &end);
  /* ERANGE on underflow/overflow still gives the correctly rounded result
     (0, a subnormal or inf), as Python's float() does */
  return end == buf + len && !isspace((unsigned char)buf[0]);
}

/* An integer field, for an integral target dtype: read by strtoll, exact
   beyond 2^53 (a double rounds 9007199254740993 to ...992).  A field
   strtoll does not take whole ("1e3", "2.0") goes through strtod and must
   be an integral double in int64's range.  Returns 1 ok, 0 not a number,
   -1 a number that is not an int64 integer. */
static int parse_int(const char *s, const char *e, int64_t *v) {
  char buf[128];
  size_t len = (size_t)(e - s);
  if (len == 0) return -1;   /* empty: NaN, no integer */
  if (len >= sizeof buf) return 0;
  memcpy(buf, s, len);
  buf[len] = 0;
  if (isspace((unsigned char)buf[0])) return 0;
  char *end;
  errno = 0;
  long long ll = strtoll(buf, &end, 10);
  if (end == buf + len && errno == 0) { *v = (int64_t)ll; return 1; }
  double d;
  float f;
  if (!parse_num(s, e, 0, &d, &f)) return 0;
  /* [-2^63, 2^63): both bounds exact in a double */
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) || d != trunc(d)) return -1;
  *v = (int64_t)d;
  return 1;
}

static int l_csv_parse(lua_State *L) {
  size_t len;
  const char *text = ltl_checklstring(L, 1, &len);
  size_t dlen;
  const char *dstr = ltl_checklstring(L, 2, &dlen);
  if (dlen != 1) return ltl_error(L, "read_csv", "delimiter must be a single character, got '%s'", dstr);
  char delim = dstr[0];
  lua_Integer first_line = ltl_checkinteger(L, 3);
  ltensor_dtype dt = ltl_checkdtype(L, 4);
  lua_Integer ncols = ltl_checkinteger(L, 5);
  if (ncols < 1 || ncols > (1 << 24)) return ltl_error(L, "read_csv", "bad column count %I", (lua_Integer)ncols);
  int as_float = dt == LTENSOR_FLOAT32, as_int = dt == LTENSOR_INT64;
  if (dt != LTENSOR_FLOAT32 && dt != LTENSOR_FLOAT64 && dt != LTENSOR_INT64)
    return ltl_error(L, "read_csv", "internal: parse dtype must be float32, float64 or int64");
  /* the target dtype's name, for "not an integer" (int64 parsing only) */
  const char *target = lua_isnoneornil(L, 7) ? "ltensor.int64" : ltl_checklstring(L, 7, NULL);
  /* selected columns: pos[c], the output position a file column is parsed
     into (its first listing; -1 unlisted), and src[k], the file column of
     output k.  A column listed twice is parsed once and copied after. */
  int64_t nkeep = ncols;
  lt_tensor *map = NULL;
  int64_t *pos = NULL, *src = NULL;
  lua_settop(L, 7);
  if (!lua_isnoneornil(L, 6)) {
    ltl_checktype(L, 6, LUA_TTABLE);
    nkeep = (int64_t)luaL_len(L, 6);
    if (nkeep < 0 || nkeep > (1 << 24)) return ltl_error(L, "read_csv", "bad column list length");
    int64_t shape[1] = {ncols + nkeep};
    map = ltl_push_new(L, LTENSOR_INT64, 1, shape);   /* GC-owned scratch */
    pos = (int64_t *)lt_data(map);
    src = pos + ncols;
    for (int64_t i = 0; i < ncols; i++) pos[i] = -1;
    for (int64_t k = 0; k < nkeep; k++) {
      lua_rawgeti(L, 6, (lua_Integer)(k + 1));
      lua_Integer c = lua_tointeger(L, -1);
      lua_pop(L, 1);
      if (c < 1 || c > ncols) return ltl_error(L, "read_csv", "column %I out of range (the file has %I)",
                                              (lua_Integer)c, (lua_Integer)ncols);
      if (pos[c - 1] < 0) pos[c - 1] = k;
      src[k] = c - 1;
    }
  }
  /* pass 1: count rows, check field counts */
  int64_t rows = 0;
  lua_Integer line = first_line;
  const char *p, *ls, *le, *end = text + len;
  int kind;
  for (p = text; (kind = next_line(&p, end, &ls, &le)) != 0; line++) {
    if (kind == LINE_BLANK) continue;
    int64_t nf = 1;
    for (const char *q = ls; q < le; q++) nf += *q == delim;
    if (nf != ncols)
      return ltl_error(L, "read_csv", "line %I has %I fields, expected %I", (lua_Integer)line,
                      (lua_Integer)nf, (lua_Integer)ncols);
    rows++;
  }
  int64_t shape[2] = {rows, nkeep};
  lt_tensor *out = ltl_push_new(L, dt, 2, shape);
  float *of = (float *)lt_data(out);
  double *od = (double *)lt_data(out);
  int64_t *oi = (int64_t *)lt_data(out);
  /* pass 2: parse */
  int64_t r = 0;
  line = first_line;
  for (p = text; (kind = next_line(&p, end, &ls, &le)) != 0; line++) {
    if (kind == LINE_BLANK) continue;
    const char *fs = ls;
    for (int64_t c = 0; c < ncols; c++) {
      const char *fe = memchr(fs, delim, (size_t)(le - fs));
      if (!fe) fe = le;
      int64_t k = pos ? pos[c] : c;
      if (k >= 0) {
        const char *a = fs, *b = fe;
        trim_field(&a, &b);
        double d = 0;
        float f = 0;
        if (as_int) {
          int64_t v = 0;
          int ok = parse_int(a, b, &v);
          if (ok == 0) return field_error(L, line, (int)c + 1, a, b);
          if (ok < 0) return ltl_error(L, "read_csv", "a value is not an integer, can't read it as %s", target);
          oi[r * nkeep + k] = v;
          fs = fe + 1;
          continue;
        }
        if (!parse_num(a, b, as_float, &d, &f)) return field_error(L, line, (int)c + 1, a, b);
        if (as_float) of[r * nkeep + k] = f;
        else od[r * nkeep + k] = d;
      }
      fs = fe + 1;
    }
    r++;
  }
  /* the repeated listings: a copy of the first one's values */
  size_t es = lt_itemsize(dt);
  char *ob = (char *)lt_data(out);
  for (int64_t k = 0; src && k < nkeep; k++) {
    int64_t k0 = pos[src[k]];
    if (k0 == k) continue;
    for (int64_t i = 0; i < rows; i++)
      memcpy(ob + (size_t)(i * nkeep + k) * es, ob + (size_t)(i * nkeep + k0) * es, es);
  }
  return 1;
}

/* The fewest significant digits (of 15, 16, 17; then fewer digits, if
   %.15g reads back, come out of %g's own trailing-zero trimming) that read
   back to v: every double round-trips at 17, so that one needs no check,
   and trying 16 first costs at most two formats and two parses. */
static int fmt_double(char *buf, size_t n, double v) {
  if (isnan(v)) return snprintf(buf, n, "nan");
  if (isinf(v)) return snprintf(buf, n, v > 0 ? "inf" : "-inf");
  int len = snprintf(buf, n, "%.16g", v);
  if (strtod(buf, NULL) != v) return snprintf(buf, n, "%.17g", v);
  char s15[40];
  int len15 = snprintf(s15, sizeof s15, "%.15g", v);
  if (strtod(s15, NULL) == v && (size_t)len15 < n) {
    memcpy(buf, s15, (size_t)len15 + 1);
    return len15;
  }
  return len;
}

/* float32: 6 to 9 digits (9 always round-trips). */
static int fmt_float(char *buf, size_t n, float v) {
  if (isnan(v)) return snprintf(buf, n, "nan");
  if (isinf(v)) return snprintf(buf, n, v > 0 ? "inf" : "-inf");
  for (int prec = 6; prec <= 8; prec++) {
    int len = snprintf(buf, n, "%.*g", prec, (double)v);
    if (strtof(buf, NULL) == v) return len;
  }
  return snprintf(buf, n, "%.9g", (double)v);
}

static int l_csv_format(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  size_t dlen;
  const char *delim = ltl_checklstring(L, 2, &dlen);
  if (t->ndim != 2 || !lt_is_contiguous(t) ||
      (t->dtype != LTENSOR_FLOAT32 && t->dtype != LTENSOR_FLOAT64 && t->dtype != LTENSOR_INT64))
    return ltl_error(L, "write_csv", "internal: expected a contiguous 2-D float32/float64/int64 tensor");
  int64_t rows = t->shape[0], cols = t->shape[1];
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  char num[64];
  const char *data = lt_data(t);
  for (int64_t r = 0; r < rows; r++) {
    for (int64_t c = 0; c < cols; c++) {
      int64_t i = r * cols + c;
      int len;
      if (t->dtype == LTENSOR_FLOAT64) len = fmt_double(num, sizeof num, ((const double *)data)[i]);
      else if (t->dtype == LTENSOR_FLOAT32) len = fmt_float(num, sizeof num, ((const float *)data)[i]);
      else len = snprintf(num, sizeof num, "%lld", (long long)((const int64_t *)data)[i]);
      if (c > 0) luaL_addlstring(&b, delim, dlen);
      luaL_addlstring(&b, num, (size_t)len);
    }
    luaL_addchar(&b, '\n');
  }
  luaL_pushresult(&b);
  return 1;
}

const ltl_reg ltl_reg_csv[] = {
  {"_csv_parse", l_csv_parse, LT_MODULE, NULL},
  {"_csv_format", l_csv_format, LT_MODULE, NULL},
  {NULL, NULL, 0, NULL}
};
