/*
 * ltensor -- a Lua 5.4 interpreter with ltensor built in.
 *
 *   ltensor script.lua args...   run a script; `arg` and `...` as in lua5.4
 *   ltensor -e 'code'            run code (may repeat; mixes with -l)
 *   ltensor                      on a terminal, interactive: each line is
 *                                evaluated and its values printed; incomplete
 *                                input continues on the next line; Ctrl-C drops
 *                                the line or stops the running code
 *   ltensor < script.lua         piped input runs as one chunk (lua5.4 < file)
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
#include "l_compat.h"   /* builds for Lua 5.1-5.4 and LuaJIT */
#include <editline/readline.h>
#include "ltensor.h"

static const char *progname = "ltensor";

/* ---- Ctrl-C ---------------------------------------------------------------
   While a chunk runs: stop it, as lua.c does -- a hook raises at the next
   Lua call, return or instruction count, and the state's interrupt flag
   (ltensor_interrupt_flag) stops a long C operation (a large matmul, a
   convolution, a reduction) between chunks of its work.  A second Ctrl-C
   before the chunk ends kills the program (the handler is reset), the way
   out of a C call that never checks.  At the prompt: the line or the
   pending block is dropped and a fresh prompt shown (prompt_action).
   A signal handler can only reach the state through globals; this is the
   program, not the library, so the no-global rule does not apply. */
static lua_State *globalL = NULL;
static volatile sig_atomic_t *interrupt_flag = NULL;   /* globalL's, set once the library is open */
static volatile sig_atomic_t prompt_interrupted = 0;

static void lstop(lua_State *L, lua_Debug *ar) {
  (void)ar;
  lua_sethook(L, NULL, 0, 0);
  /* a flag already consumed: a C operation has raised "ltensor.<fn>:
     interrupted" and this hook runs for the error's message handler */
  if (interrupt_flag && *interrupt_flag == 0) return;
  if (interrupt_flag) *interrupt_flag = 0;
  luaL_error(L, "interrupted!");
}

static void laction(int i) {
  int flag = LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT;
  signal(i, SIG_DFL);
  if (interrupt_flag) *interrupt_flag = 1;
  lua_sethook(globalL, lstop, flag, 1);
}

/* At the prompt: no SA_RESTART, so the read under readline/fgets returns
   (EINTR) and the line reader sees prompt_interrupted. */
static void prompt_action(int i) {
  (void)i;
  prompt_interrupted = 1;
}
static void catch_at_prompt(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = prompt_action;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
}
static int in_repl = 0;   /* Ctrl-C between chunks goes to prompt_action */

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
  if (interrupt_flag == NULL) interrupt_flag = ltensor_interrupt_flag(L);
  signal(SIGINT, laction);
  int status = lua_pcall(L, narg, nres, base);
  if (in_repl) catch_at_prompt();
  else signal(SIGINT, SIG_DFL);
  lua_sethook(L, NULL, 0, 0);   /* a Ctrl-C that came as the chunk ended */
  if (interrupt_flag) *interrupt_flag = 0;
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
/* On a terminal, lines come from libedit (editing, history kept in a file,
   tab completion through ltensor.repl.complete); otherwise from fgets, so
   pipes work as before.  Values print through ltensor.repl.format (tables
   of sizes as {2, 3}); `?x` is help(x). */
#define MAXINPUT 4096
#define HISTORY_LINES 1000

/* The completion callback has no user-data argument: the state it needs is
   the program's one state (as globalL for signals above). */
static lua_State *replL = NULL;
static char history_path[1024];

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

static int readline_plain(lua_State *L) {
  char buf[MAXINPUT];
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  int got = 0;
  for (;;) {   /* a line longer than the buffer arrives in pieces */
    if (fgets(buf, sizeof buf, stdin) == NULL) {
      if (prompt_interrupted) { clearerr(stdin); luaL_pushresult(&b); lua_pop(L, 1); return -2; }
      break;
    }
    got = 1;
    size_t l = strlen(buf);
    if (l > 0 && buf[l - 1] == '\n') { luaL_addlstring(&b, buf, l - 1); break; }
    luaL_addlstring(&b, buf, l);
  }
  luaL_pushresult(&b);
  if (!got) { lua_pop(L, 1); return 0; }
  return 1;
}

/* 1: a line pushed; 0: end of input; -2: Ctrl-C (nothing pushed). */
static int readline_into(lua_State *L, const char *prompt, int tty) {
  prompt_interrupted = 0;
  if (!tty) return readline_plain(L);
  char *line = readline(prompt);
  if (prompt_interrupted) { free(line); return -2; }
  if (line == NULL) return 0;
  lua_pushstring(L, line);
  free(line);
  return 1;
}

/* `?x` asks for help on x; anything else is Lua. */
static void rewrite_help(lua_State *L) {
  const char *line = lua_tostring(L, -1);
  while (*line == ' ' || *line == '\t') line++;
  if (line[0] != '?') return;
  const char *what = line + 1;
  while (*what == ' ') what++;
  if (*what == '\0') { lua_pushliteral(L, "help()"); lua_replace(L, -2); return; }
  /* help(value, "source text"): the text names what was asked for when
     the value is nil (an undefined name) */
  /* `?x:sum` (a method as it is called) is help(x.sum): the ':' of the
     last name, which is no expression by itself, becomes '.' */
  const char *colon = strrchr(what, ':');
  if (colon && colon > what && colon[1]) {
    const char *c = colon + 1;
    while (*c == '_' || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')) c++;
    while (*c == ' ' || *c == '\t') c++;
    if (*c != '\0' || colon[1] == ' ') colon = NULL;
  } else {
    colon = NULL;
  }
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addstring(&b, "help((");
  for (const char *c = what; *c; c++) luaL_addchar(&b, c == colon ? '.' : *c);
  luaL_addstring(&b, "), \"");
  for (const char *c = what; *c; c++) {
    if (*c == '"' || *c == '\\') luaL_addchar(&b, '\\');
    luaL_addchar(&b, *c);
  }
  luaL_addstring(&b, "\")");
  luaL_pushresult(&b);
  lua_replace(L, -2);
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
    int got = readline_into(L, ">> ", tty);
    if (got == -2) { lua_pop(L, 1); return -2; }   /* Ctrl-C: the block is dropped */
    if (!got) return status;   /* EOF in the middle */
    lua_pushliteral(L, "\n");
    lua_insert(L, -2);
    lua_concat(L, 3);
  }
}

static void remember(const char *chunk) {
  if (chunk[0] == '\0') return;
  HIST_ENTRY *last = history_length > 0 ? history_get(history_base + history_length - 1) : NULL;
  if (last && last->line && strcmp(last->line, chunk) == 0) return;
  add_history(chunk);
  if (history_path[0]) write_history(history_path);
}

/* Returns -1 at end of input, -2 after Ctrl-C (nothing to run), else the
   load status (chunk or error on top). */
static int loadline(lua_State *L, int tty) {
  lua_settop(L, 0);
  int got = readline_into(L, "> ", tty);
  if (got <= 0) return got == -2 ? -2 : -1;
  rewrite_help(L);
  int status = addreturn(L);
  if (status != LUA_OK) status = multiline(L, tty);
  if (status == -2) { lua_settop(L, 0); return -2; }
  if (tty) remember(lua_tostring(L, 1));
  lua_remove(L, 1);   /* the source line */
  return status;
}

/* Prints the values on the stack with ltensor.repl.format (a table of sizes
   reads {2, 3}); runs under pcall: a __tostring that raises must not end
   the REPL. */
static int print_protected(lua_State *L) {
  int n = lua_gettop(L);
  if (n == 0) return 0;
  luaL_checkstack(L, LUA_MINSTACK, "too many results to print");
  lua_getglobal(L, "require");
  lua_pushliteral(L, "ltensor.repl");
  lua_call(L, 1, 1);
  lua_getfield(L, -1, "format");
  lua_remove(L, -2);
  lua_insert(L, 1);
  lua_call(L, n, 1);
  size_t l;
  const char *s = lua_tolstring(L, -1, &l);
  if (s) { fwrite(s, 1, l, stdout); fputs("\n", stdout); }
  fflush(stdout);
  return 0;
}

/* ---- completion ---- */
/* The candidates for one completion request, computed once by
   ltensor.repl.complete and kept in the registry while libedit asks for
   them one at a time. */
static int candidates_ref = LUA_NOREF;

static int compute_candidates(lua_State *L) {
  const char *text = (const char *)lua_touserdata(L, 1);
  lua_getglobal(L, "require");
  lua_pushliteral(L, "ltensor.repl");
  lua_call(L, 1, 1);
  lua_getfield(L, -1, "complete");
  lua_pushstring(L, text);
  lua_call(L, 1, 1);
  return 1;
}

static char *candidate(const char *text, int state) {
  lua_State *L = replL;
  if (L == NULL) return NULL;
  if (state == 0) {
    luaL_unref(L, LUA_REGISTRYINDEX, candidates_ref);
    candidates_ref = LUA_NOREF;
    lua_pushcfunction(L, compute_candidates);
    lua_pushlightuserdata(L, (void *)text);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK || !lua_istable(L, -1)) { lua_pop(L, 1); return NULL; }
    candidates_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  }
  if (candidates_ref == LUA_NOREF) return NULL;
  lua_rawgeti(L, LUA_REGISTRYINDEX, candidates_ref);
  lua_rawgeti(L, -1, state + 1);
  const char *s = lua_tostring(L, -1);
  char *out = s ? strdup(s) : NULL;
  lua_pop(L, 2);
  return out;
}

static char **complete(const char *text, int start, int end) {
  (void)start; (void)end;
  rl_attempted_completion_over = 1;   /* no file-name completion */
  return rl_completion_matches(text, candidate);
}

static void edit_begin(lua_State *L) {
  replL = L;
  /* '.' and ':' stay inside a word so that "x:su" and "T.nn.Lin" complete. */
  static char breaks[] = " \t\n\"\\'`@$><=;|&{(,+-*/%^~#[]";
  rl_readline_name = "ltensor";
  rl_basic_word_break_characters = breaks;
  rl_completer_word_break_characters = breaks;
  rl_attempted_completion_function = complete;
  rl_completion_append_character = '\0';
  using_history();
  stifle_history(HISTORY_LINES);
  const char *path = getenv("LTENSOR_HISTORY");
  const char *home = getenv("HOME");
  history_path[0] = '\0';
  if (path && path[0]) snprintf(history_path, sizeof history_path, "%s", path);
  else if (home && home[0]) snprintf(history_path, sizeof history_path, "%s/.ltensor_history", home);
  if (history_path[0]) read_history(history_path);
}

static void edit_end(void) {
  if (history_path[0]) write_history(history_path);
  replL = NULL;
}

/* Errors at the prompt: the message and a short traceback without the
   prompt's own frames (the chunk typed at the prompt, the C entry). */
static int prompt_frame(const char *line, size_t len) {
  static const char *const ours[] = { "\t[C]: in ?", "\t(...tail calls...)", NULL };
  for (int i = 0; ours[i]; i++)
    if (len == strlen(ours[i]) && memcmp(line, ours[i], len) == 0) return 1;
  static const char chunk[] = "in main chunk";
  size_t lc = sizeof chunk - 1;
  return len > 7 + lc && memcmp(line, "\tstdin:", 7) == 0 && memcmp(line + len - lc, chunk, lc) == 0;
}

/* ltensor.repl's hint for the message at the top (a "did you mean" for a
   name that does not exist), or NULL; pushes one value. */
static int hint_protected(lua_State *L) {
  lua_getglobal(L, "require");
  lua_pushliteral(L, "ltensor.repl");
  lua_call(L, 1, 1);
  lua_getfield(L, -1, "hint");
  lua_pushvalue(L, 1);
  lua_call(L, 1, 1);
  return 1;
}
static const char *repl_hint(lua_State *L) {
  int msg = lua_gettop(L);
  lua_pushcfunction(L, hint_protected);
  lua_pushvalue(L, msg);
  if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_type(L, -1) == LUA_TSTRING) return lua_tostring(L, -1);
  return NULL;
}

static void report_repl_error(lua_State *L) {
  const char *hint = repl_hint(L);
  lua_insert(L, -2);   /* the hint (kept alive) under the message */
  const char *msg = lua_tostring(L, -1);
  if (msg == NULL) msg = "(error object is not a string)";
  const char *tb = strstr(msg, "\nstack traceback:\n");
  if (tb == NULL) {
    fprintf(stderr, hint ? "%s (%s)\n" : "%s\n", msg, hint);
    lua_remove(L, -2);
    return;
  }
  fwrite(msg, 1, (size_t)(tb - msg), stderr);
  if (hint) fprintf(stderr, " (%s)", hint);
  lua_remove(L, -2);
  const char *p = tb + strlen("\nstack traceback:\n");
  int shown = 0;
  while (*p) {
    size_t len = strcspn(p, "\n");
    if (!prompt_frame(p, len) && shown < 6) {
      fputs(shown == 0 ? "\nstack traceback:\n" : "\n", stderr);
      fwrite(p, 1, len, stderr);
      shown++;
    }
    p += len + (p[len] == '\n');
  }
  fputs("\n", stderr);
}

/* The global help of -e, -i and the prompt: T.help's text printed, as
   Python's help() prints (ltensor -e 'help(T.sum)' shows it; at the prompt
   it prints once, returning nothing).  T.help itself returns the text, for
   programs.  help(help) documents T.help. */
static int help_print(lua_State *L) {
  if (lua_tocfunction(L, 1) == help_print) { lua_pushvalue(L, lua_upvalueindex(1)); lua_replace(L, 1); }
  int n = lua_gettop(L);
  if (n == 1 && lua_isnil(L, 1)) {   /* help(T.zeross): not help() */
    fputs("no documentation: the value is nil (a misspelt or undefined name?)\n", stdout);
    fflush(stdout);
    return 0;
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, n, 1);
  size_t l;
  const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &l) : NULL;
  if (s) { fwrite(s, 1, l, stdout); fputs("\n", stdout); fflush(stdout); }
  return 0;
}

static void repl(lua_State *L) {
  int tty = isatty(0) && isatty(1);
  int status;
  lua_getglobal(L, "help");
  if (lua_isnil(L, -1)) {   /* help(x) / ?x at the prompt */
    lua_getglobal(L, "T");
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "help");
      lua_pushcclosure(L, help_print, 1);
      lua_setglobal(L, "help");
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  if (tty) edit_begin(L);
  in_repl = 1;
  catch_at_prompt();
  while ((status = loadline(L, tty)) != -1) {
    if (status == -2) {   /* Ctrl-C at the prompt: a fresh one, as Python's */
      fputs(tty ? "^C\n" : "\n", stdout);
      fflush(stdout);
      continue;
    }
    if (status == LUA_OK) status = docall(L, 0, LUA_MULTRET);
    if (status == LUA_OK) {
      int n = lua_gettop(L);
      lua_pushcfunction(L, print_protected);
      lua_insert(L, 1);
      status = lua_pcall(L, n, 0, 0);
    }
    if (status != LUA_OK) {
      report_repl_error(L);
      fflush(stderr);
      lua_pop(L, 1);
    }
  }
  in_repl = 0;
  signal(SIGINT, SIG_DFL);
  lua_settop(L, 0);
  if (tty) { edit_end(); fputs("\n", stdout); }
  fflush(stdout);
}

static void print_version(void) {
  printf("ltensor %d.%d.%d (%s)\n", LTENSOR_VERSION_MAJOR, LTENSOR_VERSION_MINOR,
         LTENSOR_VERSION_PATCH, LUA_RELEASE);
  fflush(stdout);
}

static const char usage_text[] =
  "usage: %s [options] [script [args]]\n"
  "Available options are:\n"
  "  -e stat   execute string 'stat' (T is the ltensor module)\n"
  "  -i        enter interactive mode after executing 'script'\n"
  "  -l name   require library 'name' into global 'name'\n"
  "  -v        show version information\n"
  "  -E        ignore environment variables (LUA_INIT)\n"
  "  -h, --help     show this help\n"
  "  --version      show version information\n"
  "  --        stop handling options\n"
  "  -         stop handling options and execute stdin\n"
  "With no arguments: on a terminal, an interactive prompt that prints values\n"
  "(Tab completes, help(f) or ?f documents f, Ctrl-C drops the line or stops\n"
  "the running code, history is kept in ~/.ltensor_history or\n"
  "$LTENSOR_HISTORY); piped or redirected input runs as one script, as\n"
  "lua5.4 < file (-i gives the prompt).  LUA_INIT_5_4 or LUA_INIT runs first.\n";

static void print_usage(const char *badoption) {
  if (badoption[1] == 'e' || badoption[1] == 'l')
    fprintf(stderr, "%s: '%s' needs argument\n", progname, badoption);
  else
    fprintf(stderr, "%s: unrecognized option '%s'\n", progname, badoption);
  fprintf(stderr, usage_text, progname);
}

enum { HAS_ERROR = 1, HAS_I = 2, HAS_V = 4, HAS_E = 8, HAS_BIG_E = 16, HAS_HELP = 32 };

/* Returns the flags; *first is the index of the script (argc if none). */
static int collectargs(char **argv, int *first) {
  int args = 0, i;
  for (i = 1; argv[i] != NULL; i++) {
    *first = i;
    if (argv[i][0] != '-') return args;
    switch (argv[i][1]) {
    case '-':
      if (strcmp(argv[i], "--help") == 0) { args |= HAS_HELP; break; }
      if (strcmp(argv[i], "--version") == 0) { args |= HAS_V; break; }
      if (argv[i][2] != '\0') return HAS_ERROR;
      *first = i + 1;
      return args;
    case '\0': return args;   /* '-': script is stdin */
    case 'h': if (argv[i][2] != '\0') return HAS_ERROR; args |= HAS_HELP; break;
    case 'E': if (argv[i][2] != '\0') return HAS_ERROR; args |= HAS_BIG_E; break;
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

/* LUA_INIT_5_4, else LUA_INIT: "@file" runs a file, anything else is code. */
static int handle_luainit(lua_State *L) {
  const char *name = "=LUA_INIT_5_4";
  const char *init = getenv(name + 1);
  if (init == NULL) { name = "=LUA_INIT"; init = getenv(name + 1); }
  if (init == NULL) return LUA_OK;
  if (init[0] == '@') return dochunk(L, luaL_loadfile(L, init + 1));
  return dostring(L, init, name);
}

static int runargs(lua_State *L, char **argv, int n) {
  for (int i = 1; i < n; i++) {
    int option = argv[i][1];
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "--version") == 0) continue;
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
  if (args & HAS_HELP) {
    printf(usage_text, progname);
    lua_pushboolean(L, 1);
    return 1;
  }
  luaL_checkversion(L);
  luaL_openlibs(L);
  /* The whole library, modules from the embedded sources: no files needed. */
  luaL_requiref(L, "ltensor", luaopen_ltensor, 0);
  lua_pop(L, 1);
  createargtable(L, argv, argc, script);
#ifdef LUA_GCGEN
  lua_gc(L, LUA_GCGEN, 0, 0);   /* as lua5.4 does (5.4 only) */
#endif
  if (args & HAS_V) print_version();
  if (args & (HAS_E | HAS_I) || script == argc) {
    /* Interactive use and one-liners get the module as the global T. */
    lua_getglobal(L, "require");
    lua_pushliteral(L, "ltensor");
    lua_call(L, 1, 1);
    lua_getfield(L, -1, "help");   /* help(f) as at the prompt: prints */
    lua_pushcclosure(L, help_print, 1);
    lua_setglobal(L, "help");
    lua_setglobal(L, "T");
  }
  if (!(args & HAS_BIG_E) && handle_luainit(L) != LUA_OK) return 0;
  if (!runargs(L, argv, script)) return 0;
  if (script < argc && handle_script(L, argv + script) != LUA_OK) return 0;
  if (args & HAS_I) {
    repl(L);
  } else if (script == argc && !(args & (HAS_E | HAS_V))) {
    if (!isatty(0)) {
      /* piped or redirected input is one chunk, as `lua5.4 < file`: locals
         live across lines, the first error stops it (exit status 1) */
      if (dochunk(L, luaL_loadfile(L, NULL)) != LUA_OK) return 0;
    } else {
      print_version();
      printf("T = require \"ltensor\" is loaded; expressions print their value.\n");
      repl(L);
    }
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
