-- ltensor.utils (T.utils): data loading (T.utils.data, with T.read_csv /
-- T.write_csv) and the progress bar (T.utils.progress).
local T = require "ltensor.core"
T.utils = T.utils or {}
T.utils.data = require "ltensor.utils.data"
require "ltensor.utils.progress"
return T.utils
