/*
 * l_fs.c -- the file-system facts that a safe save needs and Lua's io
 * library lacks (lua/ltensor/io.lua's atomic writer uses them):
 *
 *   T._path_info(path) -> kind, mode, target  |  nil, message
 *       kind "missing" | "regular" | "other" (device, FIFO, socket: written
 *       in place, never replaced); mode the permission bits of an existing
 *       file; target the path to replace: path itself, or for a symlink
 *       (also a dangling one) the file it finally names, so that saving
 *       through a link updates the file instead of replacing the link.
 *   T._create_file(path [, mode]) -> true | nil, message
 *       creates a new empty file, failing if it exists: with exactly these
 *       permission bits, or without mode as a new file (0666 less umask).
 *   T._fsync_dir(path) -> true | nil, message
 *       flushes a directory, so a rename into it survives a crash.
 *   T._fsync(file) -> true | nil, message
 *       flushes a Lua file handle to disk (the data before the rename).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "l_lua.h"

#define MAX_LINKS 40   /* as the kernel's ELOOP limit */

/* Follows symlinks from path (pushed result: the final name, which may not
   exist).  Returns 0, or -1 with errno set. */
static int resolve_links(lua_State *L, const char *path) {
  lua_pushstring(L, path);
  for (int hops = 0; hops <= MAX_LINKS; hops++) {
    const char *cur = lua_tostring(L, -1);
    struct stat st;
    if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode)) return 0;
    char buf[PATH_MAX];
    ssize_t n = readlink(cur, buf, sizeof buf - 1);
    if (n < 0) return -1;
    buf[n] = '\0';
    if (buf[0] == '/') {
      lua_pushstring(L, buf);
    } else {
      /* relative to the link's own directory */
      const char *slash = strrchr(cur, '/');
      if (slash) {
        lua_pushlstring(L, cur, (size_t)(slash - cur + 1));
        lua_pushstring(L, buf);
        lua_concat(L, 2);
      } else {
        lua_pushstring(L, buf);
      }
    }
    lua_remove(L, -2);
  }
  errno = ELOOP;
  return -1;
}

static int l_path_info(lua_State *L) {
  const char *path = ltl_checkstring(L, 1);
  if (resolve_links(L, path) != 0) {
    lua_pushnil(L);
    lua_pushfstring(L, "cannot resolve '%s': %s", path, strerror(errno));
    return 2;
  }
  const char *target = lua_tostring(L, -1);
  struct stat st;
  if (stat(target, &st) != 0) {
    if (errno != ENOENT) {
      lua_pushnil(L);
      lua_pushfstring(L, "cannot inspect '%s': %s", target, strerror(errno));
      return 2;
    }
    lua_pushliteral(L, "missing");
    lua_pushnil(L);
  } else {
    if (S_ISDIR(st.st_mode)) {
      lua_pushnil(L);
      lua_pushfstring(L, "'%s' is a directory", path);
      return 2;
    }
    lua_pushstring(L, S_ISREG(st.st_mode) ? "regular" : "other");
    lua_pushinteger(L, (lua_Integer)(st.st_mode & 07777));
  }
  lua_pushvalue(L, -3);
  return 3;
}

static int l_create_file(lua_State *L) {
  const char *path = ltl_checkstring(L, 1);
  int keep = !lua_isnoneornil(L, 2);
  lua_Integer mode = keep ? ltl_checkinteger(L, 2) : 0;
  /* a new file: 0666 less the umask, as any program's; replacing a file:
     created private, then given exactly the old file's bits */
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, keep ? 0600 : 0666);
  if (fd < 0) { lua_pushnil(L); lua_pushstring(L, strerror(errno)); return 2; }
  if (!keep) { close(fd); lua_pushboolean(L, 1); return 1; }
  int rc = fchmod(fd, (mode_t)(mode & 07777));
  int err = errno;
  close(fd);
  if (rc != 0) { unlink(path); lua_pushnil(L); lua_pushstring(L, strerror(err)); return 2; }
  lua_pushboolean(L, 1);
  return 1;
}

static int l_fsync_dir(lua_State *L) {
  const char *path = ltl_checkstring(L, 1);
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) { lua_pushnil(L); lua_pushstring(L, strerror(errno)); return 2; }
  int rc = fsync(fd);
  int err = errno;
  close(fd);
  /* some file systems cannot sync a directory; that is not a failed save */
  if (rc != 0 && err != EINVAL && err != EROFS) { lua_pushnil(L); lua_pushstring(L, strerror(err)); return 2; }
  lua_pushboolean(L, 1);
  return 1;
}

/* T._fsync(file): flush a Lua file handle and ask the OS to put it on disk,
   so that the rename that follows never exposes a half-written file. */
static int l_fsync(lua_State *L) {
  luaL_Stream *p = (luaL_Stream *)ltl_checkudata(L, 1, LUA_FILEHANDLE);
  if (!ltc_stream_open(p)) return ltl_argerror(L, 1, "attempt to use a closed file");
  if (fflush(p->f) != 0 || fsync(fileno(p->f)) != 0) return luaL_fileresult(L, 0, NULL);
  lua_pushboolean(L, 1);
  return 1;
}

const ltl_reg ltl_reg_fs[] = {
  {"_path_info", l_path_info, LT_MODULE, NULL},
  {"_create_file", l_create_file, LT_MODULE, NULL},
  {"_fsync_dir", l_fsync_dir, LT_MODULE, NULL},
  {"_fsync", l_fsync, LT_MODULE, NULL},
  {NULL, NULL, 0, NULL}
};
