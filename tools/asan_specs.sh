#!/usr/bin/env bash
# tools/asan_specs.sh -- run every spec inside the ASan+UBSan build of the
# `ltensor` command (make asan).  busted runs in that process (--ignore-lua:
# no re-exec under lua5.4), so the sanitizer runtime is linked into the
# executable and no LD_PRELOAD is needed; the command installs ltensor.core
# and the Lua modules as package.preload entries, so the specs exercise the
# instrumented library rather than build/ltensor/core.so.
#
# ASan errors stop the run at once (memory is corrupt), and so do UBSan
# reports (the build has -fno-sanitize-recover=all): the summary line is
# then missing and the run counts as failed; each report counts too.
# Prints "N passed, M failed" as its last line; exits non-zero on failure.
set -u
cd "$(dirname "$0")/.."
log=build/asan/specs.log
mkdir -p build/asan

# quarantine_size_mb: ASan keeps freed memory in quarantine (256 MB by
# default), which specs checking that RSS stays flat would see as growth.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:quarantine_size_mb=16:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=0}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tools/lsan.supp}
export LTENSOR_ASAN=1

build/asan/bin/ltensor /usr/bin/busted --ignore-lua "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}

summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)
ub=$(grep -c 'runtime error:' "$log")
asan=$(grep -c 'ERROR: \(Address\|Leak\)Sanitizer' "$log")
if [ -z "$summary" ]; then
  echo "make asan: the spec run stopped before its summary (rc=$rc; sanitizer reports: $asan)"
  summary="0 passed, 0 failed"
  rc=1
fi
passed=${summary%% passed*}
failed=${summary#*, }; failed=${failed%% failed}
if [ "$ub" -ne 0 ]; then
  echo "make asan: $ub UBSan report(s) of undefined behaviour above (grep 'runtime error:' $log)"
  failed=$((failed + ub))
fi
if [ "$asan" -ne 0 ] || { [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; }; then
  failed=$((failed + 1))   # a crash or leak report after the specs passed
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$rc" -eq 0 ]
