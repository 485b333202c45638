-- spec/repl_helpers.lua: driving the ltensor program, shared by repl_spec and
-- repl_hints_spec (loaded with dofile; busted runs *_spec.lua only).
local M = {}
M.CLI = "./build/bin/ltensor"

-- Runs a shell command; its output (stderr included) and exit status (read
-- from the shell: Lua 5.1's p:close() does not return it).
function M.sh(cmd)
  local p = assert(io.popen(cmd .. " 2>&1; echo \"rc=$?\""))
  local out = p:read("*a")
  p:close()
  local code = tonumber(out:match("rc=(%d+)%s*$"))
  return (out:gsub("rc=%d+%s*$", "")), code
end

-- Feeds `input` to the prompt through a pipe (no terminal).  -i: without
-- it, piped input runs as one script (as lua5.4 < file).
function M.piped(input, args)
  local f = os.tmpname()
  local h = assert(io.open(f, "w")) h:write(input) h:close()
  local out, code = M.sh(M.CLI .. " -i " .. (args or "") .. " < " .. f)
  os.remove(f)
  return (out:gsub("^ltensor %S+ %b()\n", "")), code   -- -i's version line
end

-- Types `keys` (one chunk per element) at the prompt in a pseudo-terminal.
-- opts.cols: the terminal's width (tools/pty_drive.py --cols).
function M.typed(keys, history, opts)
  local f = os.tmpname()
  local h = assert(io.open(f, "w")) h:write(table.concat(keys, "\n"), "\n") h:close()
  local cols = opts and opts.cols and (" --cols " .. opts.cols) or ""
  local out = M.sh("python3 tools/pty_drive.py" .. cols .. " --env LTENSOR_HISTORY=" .. history .. " -- " .. M.CLI .. " < " .. f)
  os.remove(f)
  return (out:gsub("\r", ""))
end

return M
