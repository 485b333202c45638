#!/usr/bin/env bash
# tools/fuzz.sh CALLS SECONDS SEED -- the two fuzzers of `make fuzz`, inside
# the ASan+UBSan build of the ltensor command (FUZZ_LOADER_SECONDS: the
# loaders' share, SECONDS unless set).  A sanitizer report, a crash
# or a finding fails the fuzzer; the last line is "N passed, M failed".
set -u
cd "$(dirname "$0")/.."
calls=${1:-200000} seconds=${2:-600} seed=${3:-1}
mkdir -p build/fuzz
pass=0 fail=0
echo "== fuzz_api: $calls calls or $seconds s (seed $seed)"
# A call stuck inside C (the Lua watchdog of fuzz_api.lua only sees Lua
# code) stops the log from growing: after FUZZ_STALL seconds without a new
# line the fuzzer is stopped and the stall is a finding, named by the log's
# last line, instead of a run that never ends.
stall=${FUZZ_STALL:-300}
: > build/fuzz/api.log
FUZZ_SECONDS=$seconds FUZZ_LOG=build/fuzz/api.log build/asan/bin/ltensor tools/fuzz_api.lua "$calls" "$seed" > build/fuzz/api.out 2>&1 &
fuzz_pid=$!
stalled=0
while kill -0 "$fuzz_pid" 2>/dev/null; do
  sleep 5
  age=$(( $(date +%s) - $(stat -c %Y build/fuzz/api.log) ))
  if [ "$age" -gt "$stall" ] && kill -0 "$fuzz_pid" 2>/dev/null; then
    stalled=1
    echo "fuzz_api: STALLED: no call finished for $age s; the call: $(tail -n 1 build/fuzz/api.log)"
    kill -KILL "$fuzz_pid" 2>/dev/null
    break
  fi
done
wait "$fuzz_pid"
rc=$?
[ $stalled -eq 1 ] && rc=124
tail -n 5 build/fuzz/api.out
if [ $rc -eq 0 ] && grep -q 'problems: 0$' build/fuzz/api.out && ! grep -q 'runtime error:' build/fuzz/api.out; then
  pass=$((pass + 1))
else
  fail=$((fail + 1))
  echo "fuzz_api: FAILED (rc=$rc; the last call is the last line of build/fuzz/api.log: rerun it alone with"
  echo "  FUZZ_ONLY=<its #number> build/asan/bin/ltensor tools/fuzz_api.lua $calls $seed)"
fi
loader_seconds=${FUZZ_LOADER_SECONDS:-$seconds}
echo "== fuzz_loaders: $loader_seconds s of mutated files (seed $seed)"
build/asan/bin/ltensor tools/fuzz_loaders.lua "$loader_seconds" "$seed" > build/fuzz/loaders.out 2>&1
rc=$?
grep -v '^\[fuzz_loaders\]' build/fuzz/loaders.out | tail -n 5
if [ $rc -eq 0 ] && ! grep -q 'runtime error:' build/fuzz/loaders.out; then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); echo "fuzz_loaders: FAILED (rc=$rc; inputs in build/fuzz/finding-*.bin)"
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
