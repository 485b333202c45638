-- Build and install from a checkout (offline, no extra flags; `make install`
-- copies every lua/ltensor/**.lua, packages included):
--   luarocks --lua-version 5.4 make --local    (or 5.1, 5.2, 5.3; LuaJIT via a
--   luarocks configured for it: the Makefile asks the interpreter LUA)
rockspec_format = "3.0"
package = "ltensor"
version = "scm-1"
source = { url = "git+https://example.invalid/ltensor.git" }
description = {
  summary = "Tensors with PyTorch semantics for Lua 5.1-5.4 and LuaJIT (C, OpenBLAS)",
  detailed = [[
A tensor userdata with PyTorch's dtype promotion, broadcasting and autograd,
OpenBLAS matrix products, a small nn/optim layer, the `ltensor` script
runner and REPL, and a C API for hosts that embed Lua (src/include/ltensor.h).]],
  license = "MIT",
}
dependencies = { "lua >= 5.1, < 5.5" }   -- 5.1, 5.2, 5.3, 5.4 and LuaJIT (README)
-- The library only: luarocks does not search the multiarch include directory
-- where Debian puts cblas.h; gcc and pkg-config find it by themselves.
-- zlib (PNG images) and libedit (the ltensor program's line editor) are the
-- other two, both permissively licensed.
external_dependencies = {
  OPENBLAS = { library = "openblas" },
  ZLIB = { library = "z" },
  LIBEDIT = { library = "edit" },
}
build = {
  -- The Makefile is the single build description (in-tree builds, CI, the
  -- static library for hosts); luarocks' variables override its defaults.
  type = "make",
  build_variables = {
    CFLAGS = "$(CFLAGS)", LIBFLAG = "$(LIBFLAG)", LUA_INCDIR = "$(LUA_INCDIR)",
    LUA = "$(LUA)", CC = "$(CC)",
    -- where luarocks found OpenBLAS (the Makefile links it from there)
    OPENBLAS_INCDIR = "$(OPENBLAS_INCDIR)", OPENBLAS_LIBDIR = "$(OPENBLAS_LIBDIR)",
  },
  install_variables = {
    INST_PREFIX = "$(PREFIX)", INST_BINDIR = "$(BINDIR)", INST_LIBDIR = "$(LIBDIR)",
    INST_LUADIR = "$(LUADIR)", INST_CONFDIR = "$(CONFDIR)",
  },
}
-- The "busted" test type needs busted as a rock (unavailable offline).
test = { type = "command", command = "busted --lua=lua5.4" }   -- make test-luajit ... for the other hosts
