-- tools/busted_summary.lua -- busted output handler: the usual terminal
-- output, then one machine-readable last line "N passed, M failed" (errors
-- count as failures; pending tests are reported on the line before).
-- .busted selects it; `make test` and .ci/run read the last line.
return function(options)
  local busted = require "busted"
  local ok, handler = pcall(function()
    return require("busted.outputHandlers.utfTerminal")(options)
  end)
  if not ok then handler = require("busted.outputHandlers.plainTerminal")(options) end
  busted.subscribe({ "suite", "end" }, function()
    local failed = handler.failuresCount + handler.errorsCount
    if handler.pendingsCount > 0 then io.write(("\n%d pending"):format(handler.pendingsCount)) end
    io.write(("\n%d passed, %d failed\n"):format(handler.successesCount, failed))
    io.flush()
    return nil, true
  end)
  return handler
end
