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
 *   T._write_new(path, mode|nil, chunks [, nosync]) -> true | nil, message
 *       creates path as _create_file does and writes the strings of the
 *       list chunks through the descriptor that created it (never reopened
 *       by name: in a directory others can write, the name could be
 *       swapped between the create and an open), then fsyncs it; on any
 *       failure the file is removed.  A third result "open" says the file
 *       could not be created.
 *   T._write_in_place(path, chunks [, nosync]) -> true | nil, message
 *       overwrites an existing file through its own inode: writes, then
 *       truncates to the new length (for a file with several hard links,
 *       which a rename would split).
 *
 * _path_info also returns, for an existing target, its link count and
 * whether the caller may write it (faccessat with AT_EACCESS: the effective
 * ids, as open would check), so that a save never replaces, by renaming
 * over it in a writable directory, a file its caller could not write.
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
  if (lua_isnil(L, -2)) return 3;   /* missing: nothing more to say */
  lua_pushinteger(L, (lua_Integer)st.st_nlink);
  lua_pushboolean(L, faccessat(AT_FDCWD, target, W_OK, AT_EACCESS) == 0);
  return 5;
}

/* the list of strings at idx, checked before any descriptor is opened (a
   raise after would leak it) */
static void check_chunks(lua_State *L, int idx) {
  ltl_checktype(L, idx, LUA_TTABLE);
  size_t n = lua_rawlen(L, idx);
  for (size_t i = 1; i <= n; i++) {
    lua_rawgeti(L, idx, (lua_Integer)i);
    int ok = lua_type(L, -1) == LUA_TSTRING;
    lua_pop(L, 1);
    if (!ok) ltl_argerror(L, idx, "a list of strings expected");
  }
}

/* writes every chunk to fd (partial writes and EINTR retried); 0, or -1
   with errno set.  *total: the bytes written. */
static int write_chunks_fd(lua_State *L, int idx, int fd, off_t *total) {
  size_t n = lua_rawlen(L, idx);
  *total = 0;
  for (size_t i = 1; i <= n; i++) {
    lua_rawgeti(L, idx, (lua_Integer)i);
    size_t len;
    const char *p = lua_tolstring(L, -1, &len);
    while (len > 0) {
      ssize_t w = write(fd, p, len);
      if (w < 0) {
        if (errno == EINTR) continue;
        lua_pop(L, 1);
        return -1;
      }
      p += w; len -= (size_t)w; *total += (off_t)w;
    }
    lua_pop(L, 1);
  }
  return 0;
}

/* nil and strerror(err) */
static int push_fail(lua_State *L, int err) {
  lua_pushnil(L);
  lua_pushstring(L, strerror(err));
  return 2;
}

static int l_write_new(lua_State *L) {
  const char *path = ltl_checkstring(L, 1);
  int keep = !lua_isnoneornil(L, 2);
  lua_Integer mode = keep ? ltl_checkinteger(L, 2) : 0;
  check_chunks(L, 3);
  int nosync = lua_toboolean(L, 4);
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, keep ? 0600 : 0666);
  if (fd < 0) { push_fail(L, errno); lua_pushliteral(L, "open"); return 3; }
  off_t total;
  int rc = keep ? fchmod(fd, (mode_t)(mode & 07777)) : 0;
  if (rc == 0) rc = write_chunks_fd(L, 3, fd, &total);
  if (rc == 0 && !nosync) rc = fsync(fd);
  int err = errno;
  if (close(fd) != 0 && rc == 0) { rc = -1; err = errno; }
  if (rc != 0) { unlink(path); return push_fail(L, err); }
  lua_pushboolean(L, 1);
  return 1;
}

/* Not atomic: a failure part-way leaves the file part-written (the price
   of keeping the hard links; a rename would give the name a new inode and
   leave the other links with the old data).  Written before truncating,
   so a file that cannot be opened for writing keeps its bytes. */
static int l_write_in_place(lua_State *L) {
  const char *path = ltl_checkstring(L, 1);
  check_chunks(L, 2);
  int nosync = lua_toboolean(L, 3);
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return push_fail(L, errno);
  off_t total;
  int rc = write_chunks_fd(L, 2, fd, &total);
  if (rc == 0) rc = ftruncate(fd, total);
  if (rc == 0 && !nosync) rc = fsync(fd);
  int err = errno;
  if (close(fd) != 0 && rc == 0) { rc = -1; err = errno; }
  if (rc != 0) return push_fail(L, err);
  lua_pushboolean(L, 1);
  return 1;
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
  {"_write_new", l_write_new, LT_MODULE, NULL},
  {"_write_in_place", l_write_in_place, LT_MODULE, NULL},
  {NULL, NULL, 0, NULL}
};
