/*
 * ltensor -- a Lua 5.4 interpreter with ltensor built in.
 *
 *   ltensor script.lua args...   run a script; `arg` and `...` as in lua5.4
 *   ltensor -e 'code'            run code (may repeat; mixes with -l)
 *   ltensor                      interactive: each line is evaluated and its
 *                                values printed (tostring); incomplete input
 *                                continues on the next line
 *
 * Options: -e stat, -l name (require name into global name), -i (REPL after
 * the script), -v (version), -- (stop options), - (script from stdin).
 *
 * The library (C core and Lua modules) is linked in: `require "ltensor"`
 * works with no Lua files installed.  In -e code and the REPL the global T
 * is the module.  This program is the only place in the project that prints;
 * the library itself never does.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>
#include "ltensor.h"

static const char *progname = "ltensor";

/* ---- Ctrl-C: stop the running chunk, as lua.c does --------------------- */
/* A signal handler can only reach the state through a global; this is the
   program, not the library, so the no-global rule does not apply. */
static lua_State *globalL = NULL;

static void lstop(lua_State *L, lua_Debug *ar) {
  (void)ar;
  lua_sethook(L, NULL, 0, 0);
  luaL_error(L, "interrupted!");
}

static void laction(int i) {
  int flag = LUA_MASKCALL | LUA_MASKRET | LUA_MASKLINE | LUA_MASKCOUNT;
  signal(i, SIG_DFL);
  lua_sethook(globalL, lstop, flag, 1);
}

static void report_message(const char *msg) {
  fprintf(stderr, "%s: %s\n", progname, msg);
  fflush(stderr);
}

static int report(lua_State *L, int status) {
  if (status != LUA_OK) {
    const char *msg = lua_tostring(L, -1);
    if (msg == NULL) msg = "(error object is not a string)";
    report_message(msg);
    lua_pop(L, 1);
  }
  return status;
}

static int msghandler(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (msg == NULL) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  luaL_traceback(L, L, msg, 1);
  return 1;
}

static int docall(lua_State *L, int narg, int nres) {
  int base = lua_gettop(L) - narg;
  lua_pushcfunction(L, msghandler);
  lua_insert(L, base);
  globalL = L;
  signal(SIGINT, laction);
  int status = lua_pcall(L, narg, nres, base);
  signal(SIGINT, SIG_DFL);
  lua_remove(L, base);
  return status;
}

static int dochunk(lua_State *L, int status) {
  if (status == LUA_OK) status = docall(L, 0, 0);
  return report(L, status);
}

static int dostring(lua_State *L, const char *s, const char *name) {
  return dochunk(L, luaL_loadbuffer(L, s, strlen(s), name));
}

static int dolibrary(lua_State *L, const char *name) {
  lua_getglobal(L, "require");
  lua_pushstring(L, name);
  int status = docall(L, 1, 1);
  if (status == LUA_OK) lua_setglobal(L, name);
  return report(L, status);
}

/* arg table as lua.c builds it: script at 0, its arguments at 1.., the
   interpreter and options at negative indices. */
static void createargtable(lua_State *L, char **argv, int argc, int script) {
  if (script == argc) script = 0;
  lua_createtable(L, argc - (script + 1), script + 1);
  for (int i = 0; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i - script);
  }
  lua_setglobal(L, "arg");
}

static int pushargs(lua_State *L) {
  if (lua_getglobal(L, "arg") != LUA_TTABLE) luaL_error(L, "'arg' is not a table");
  int n = (int)luaL_len(L, -1);
  luaL_checkstack(L, n + 3, "too many arguments to script");
  for (int i = 1; i <= n; i++) lua_rawgeti(L, -i, i);
  lua_remove(L, -n - 1);
  return n;
}

static int handle_script(lua_State *L, char **argv) {
  const char *fname = argv[0];
  if (strcmp(fname, "-") == 0 && strcmp(argv[-1], "--") != 0) fname = NULL;  /* stdin */
  int status = luaL_loadfile(L, fname);
  if (status == LUA_OK) {
    int n = pushargs(L);
    status = docall(L, n, LUA_MULTRET);
  }
  return report(L, status);
}

/* ---- REPL -------------------------------------------------------------- */
#define MAXINPUT 4096

/* An incomplete chunk's syntax error ends in "<eof>". */
static int incomplete(lua_State *L, int status) {
  if (status == LUA_ERRSYNTAX) {
    size_t lmsg;
    const char *msg = lua_tolstring(L, -1, &lmsg);
    const char *mark = "<eof>";
    size_t lmark = strlen(mark);
    if (lmsg >= lmark && strcmp(msg + lmsg - lmark, mark) == 0) {
      lua_pop(L, 1);
      return 1;
    }
  }
  return 0;
}

static int readline_into(lua_State *L, const char *prompt, int tty) {
  char buf[MAXINPUT];
  if (tty) { fputs(prompt, stdout); fflush(stdout); }
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  int got = 0;
  for (;;) {   /* a line longer than the buffer arrives in pieces */
    if (fgets(buf, sizeof buf, stdin) == NULL) break;
    got = 1;
    size_t l = strlen(buf);
    if (l > 0 && buf[l - 1] == '\n') { luaL_addlstring(&b, buf, l - 1); break; }
    luaL_addlstring(&b, buf, l);
  }
  luaL_pushresult(&b);
  if (!got) { lua_pop(L, 1); return 0; }
  return 1;
}

/* Try "return <line>" first so that expressions print their value. */
static int addreturn(lua_State *L) {
  const char *line = lua_tostring(L, -1);
  const char *retline = lua_pushfstring(L, "return %s;", line);
  int status = luaL_loadbuffer(L, retline, strlen(retline), "=stdin");
  if (status == LUA_OK) lua_remove(L, -2);   /* drop the modified line */
  else lua_pop(L, 2);                         /* drop result and modified line */
  return status;
}

static int multiline(lua_State *L, int tty) {
  for (;;) {
    size_t len;
    const char *line = lua_tolstring(L, 1, &len);
    int status = luaL_loadbuffer(L, line, len, "=stdin");
    if (!incomplete(L, status)) return status;
    if (!readline_into(L, ">> ", tty)) return status;   /* EOF in the middle */
    lua_pushliteral(L, "\n");
    lua_insert(L, -2);
    lua_concat(L, 3);
  }
}

/* Returns -1 at end of input, else the load status (chunk or error on top). */
static int loadline(lua_State *L, int tty) {
  lua_settop(L, 0);
  if (!readline_into(L, "> ", tty)) return -1;
  int status = addreturn(L);
  if (status != LUA_OK) status = multiline(L, tty);
  lua_remove(L, 1);   /* the source line */
  return status;
}

static void print_results(lua_State *L) {
  int n = lua_gettop(L);
  if (n == 0) return;
  luaL_checkstack(L, LUA_MINSTACK, "too many results to print");
  for (int i = 1; i <= n; i++) {
    size_t l;
    const char *s = luaL_tolstring(L, i, &l);
    if (i > 1) fputs("\t", stdout);
    fwrite(s, 1, l, stdout);
    lua_pop(L, 1);
  }
  fputs("\n", stdout);
  fflush(stdout);
}

/* print_results under pcall: a __tostring that raises must not end the REPL. */
static int print_protected(lua_State *L) {
  print_results(L);
  return 0;
}

static void repl(lua_State *L) {
  int tty = isatty(0);
  int status;
  while ((status = loadline(L, tty)) != -1) {
    if (status == LUA_OK) status = docall(L, 0, LUA_MULTRET);
    if (status == LUA_OK) {
      int n = lua_gettop(L);
      lua_pushcfunction(L, print_protected);
      lua_insert(L, 1);
      status = lua_pcall(L, n, 0, 0);
    }
    if (status != LUA_OK) {
      const char *msg = lua_tostring(L, -1);
      fprintf(stderr, "%s\n", msg ? msg : "(error object is not a string)");
      fflush(stderr);
      lua_pop(L, 1);
    }
  }
  lua_settop(L, 0);
  if (tty) fputs("\n", stdout);
  fflush(stdout);
}

static void print_version(void) {
  printf("ltensor %d.%d.%d (%s)\n", LTENSOR_VERSION_MAJOR, LTENSOR_VERSION_MINOR,
         LTENSOR_VERSION_PATCH, LUA_RELEASE);
  fflush(stdout);
}

static void print_usage(const char *badoption) {
  if (badoption[1] == 'e' || badoption[1] == 'l')
    fprintf(stderr, "%s: '%s' needs argument\n", progname, badoption);
  else
    fprintf(stderr, "%s: unrecognized option '%s'\n", progname, badoption);
  fprintf(stderr,
          "usage: %s [options] [script [args]]\n"
          "Available options are:\n"
          "  -e stat   execute string 'stat' (T is the ltensor module)\n"
          "  -i        enter interactive mode after executing 'script'\n"
          "  -l name   require library 'name' into global 'name'\n"
          "  -v        show version information\n"
          "  --        stop handling options\n"
          "  -         stop handling options and execute stdin\n"
          "With no arguments: an interactive prompt that prints values.\n",
          progname);
}

enum { HAS_ERROR = 1, HAS_I = 2, HAS_V = 4, HAS_E = 8 };

/* Returns the flags; *first is the index of the script (argc if none). */
static int collectargs(char **argv, int *first) {
  int args = 0, i;
  for (i = 1; argv[i] != NULL; i++) {
    *first = i;
    if (argv[i][0] != '-') return args;
    switch (argv[i][1]) {
    case '-':
      if (argv[i][2] != '\0') return HAS_ERROR;
      *first = i + 1;
      return args;
    case '\0': return args;   /* '-': script is stdin */
    case 'i': if (argv[i][2] != '\0') return HAS_ERROR; args |= HAS_I | HAS_V; break;
    case 'v': if (argv[i][2] != '\0') return HAS_ERROR; args |= HAS_V; break;
    case 'e': args |= HAS_E; /* fall through */
    case 'l':
      if (argv[i][2] == '\0') {
        i++;
        if (argv[i] == NULL || argv[i][0] == '-') return HAS_ERROR;
      }
      break;
    default: return HAS_ERROR;
    }
  }
  *first = i;
  return args;
}

static int runargs(lua_State *L, char **argv, int n) {
  for (int i = 1; i < n; i++) {
    int option = argv[i][1];
    if (option == 'e' || option == 'l') {
      const char *extra = argv[i] + 2;
      if (*extra == '\0') extra = argv[++i];
      int status = option == 'e' ? dostring(L, extra, "=(command line)") : dolibrary(L, extra);
      if (status != LUA_OK) return 0;
    }
  }
  return 1;
}

/* Runs in protected mode so that memory errors while starting are reported. */
static int pmain(lua_State *L) {
  int argc = (int)lua_tointeger(L, 1);
  char **argv = (char **)lua_touserdata(L, 2);
  int script = 0;
  int args = collectargs(argv, &script);
  if (args == HAS_ERROR) {
    print_usage(argv[script]);
    return 0;
  }
  luaL_checkversion(L);
  luaL_openlibs(L);
  /* The whole library, modules from the embedded sources: no files needed. */
  luaL_requiref(L, "ltensor", luaopen_ltensor, 0);
  lua_pop(L, 1);
  createargtable(L, argv, argc, script);
  lua_gc(L, LUA_GCGEN, 0, 0);   /* as lua5.4 does */
  if (args & HAS_V) print_version();
  if (args & HAS_E || script == argc) {
    /* Interactive use and one-liners get the module as the global T. */
    lua_getglobal(L, "require");
    lua_pushliteral(L, "ltensor");
    lua_call(L, 1, 1);
    lua_setglobal(L, "T");
  }
  if (!runargs(L, argv, script)) return 0;
  if (script < argc && handle_script(L, argv + script) != LUA_OK) return 0;
  if (args & HAS_I) {
    repl(L);
  } else if (script == argc && !(args & (HAS_E | HAS_V))) {
    if (isatty(0)) {
      print_version();
      printf("T = require \"ltensor\" is loaded; expressions print their value.\n");
    }
    repl(L);
  }
  lua_pushboolean(L, 1);
  return 1;
}

int main(int argc, char **argv) {
  if (argv[0] && argv[0][0]) progname = argv[0];
  lua_State *L = luaL_newstate();
  if (L == NULL) {
    report_message("cannot create state: not enough memory");
    return EXIT_FAILURE;
  }
  lua_pushcfunction(L, pmain);
  lua_pushinteger(L, argc);
  lua_pushlightuserdata(L, argv);
  int status = lua_pcall(L, 2, 1, 0);
  int result = lua_toboolean(L, -1);
  report(L, status);
  lua_close(L);
  return (result && status == LUA_OK) ? EXIT_SUCCESS : EXIT_FAILURE;
}
