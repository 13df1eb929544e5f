#!/usr/bin/env bash
# fuzz.sh — builds graphc's libFuzzer targets (tests/fuzz) and runs them.
#
#   bash scripts/fuzz.sh [--time SECONDS] [--jobs N] [--seed N] [--keep-going] [--build-only]
#                        [--skip-if-absent] [TARGET ...]
#
# TARGET is onnx, text, npy or builder (default: all four, one after the other).
# See --help below for what each option does. Builds in build-fuzz/ with clang
# (-DGRAPHC_FUZZ=ON: graphc_core and the targets under libFuzzer + ASan + UBSan).
# Each target runs seeded from tests/fuzz/corpus/TARGET; the inputs it discovers go
# to build-fuzz/corpus/TARGET (kept between runs, never committed); a crash, timeout,
# leak or out-of-memory input is written to tests/fuzz/regressions/TARGET/, where the
# normal test run replays it (ctest fuzz_replay_TARGET) once it is committed.
set -uo pipefail
cd "$(dirname "$0")/.."

usage() {
  cat <<'EOF'
usage: bash scripts/fuzz.sh [options] [TARGET ...]

Builds the libFuzzer targets of tests/fuzz in build-fuzz/ (clang, -DGRAPHC_FUZZ=ON,
AddressSanitizer + UndefinedBehaviorSanitizer) and runs each TARGET (onnx, text, npy,
builder; default: all) for a while, seeded from tests/fuzz/corpus/TARGET.

options:
  --time SECONDS     how long each target runs (default 60)
  --jobs N           run N targets at the same time (default 1: one after the other)
  --seed N           libFuzzer's random seed (default 0: a new one each run). CI passes a
                     fixed seed so that a run explores the same inputs each time and a
                     change, not chance, decides whether it finds something
  --keep-going       do not stop a target at its first finding: libFuzzer's -fork=1 mode
                     (one fuzzing process at a time under a supervisor) records every
                     crash, timeout and out-of-memory input and goes on until --time
  --build-only       build the targets and stop
  --skip-if-absent   when clang or its libFuzzer runtime is missing, say so and exit 0
                     (without it, that is an error, status 2)
  -h, --help         this text

Limits per input: 25 s (-timeout), 2048 MB RSS (-rss_limit_mb), 1024 MB in one malloc
(-malloc_limit_mb); the targets refuse legitimately huge models themselves (tests/fuzz/fuzz.h).

Output: per target one line with the seconds run, executions, executions per second,
coverage (libFuzzer's cov: edges), corpus size and findings; logs in build-fuzz/logs/.
Findings are written to tests/fuzz/regressions/TARGET/ (crash-*, timeout-*, leak-*, oom-*);
fix the bug, keep the file (a descriptive name is welcome) and commit it: ctest's
fuzz_replay_TARGET replays it in every build from then on.

Exit status: 0 when no target found anything, 1 when one did, 2 on a build error
(or missing clang/libFuzzer without --skip-if-absent).
EOF
}

time_s=60
jobs=1
keep_going=0
seed=0
build_only=0
skip_if_absent=0
targets=()
all_targets=(onnx text npy builder)
while [ $# -gt 0 ]; do
  case "$1" in
    --time) time_s=${2:?--time needs SECONDS}; shift ;;
    --time=*) time_s=${1#--time=} ;;
    --jobs) jobs=${2:?--jobs needs N}; shift ;;
    --jobs=*) jobs=${1#--jobs=} ;;
    --seed) seed=${2:?--seed needs N}; shift ;;
    --seed=*) seed=${1#--seed=} ;;
    --keep-going) keep_going=1 ;;
    --build-only) build_only=1 ;;
    --skip-if-absent) skip_if_absent=1 ;;
    -h|--help) usage; exit 0 ;;
    onnx|text|npy|builder) targets+=("$1") ;;
    *) echo "fuzz.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[ ${#targets[@]} -eq 0 ] && targets=("${all_targets[@]}")
case "$time_s$jobs$seed" in *[!0-9]*) echo "fuzz.sh: --time, --jobs and --seed take whole numbers" >&2; exit 2 ;; esac

# clang with its libFuzzer runtime (Debian: clang + libclang-rt-14-dev, scripts/setup.sh).
cc=${FUZZ_CC:-clang}
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf '#include <stdint.h>\n#include <stddef.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return 0; }\n' >"$probe/p.c"
if ! command -v "$cc" >/dev/null 2>&1 || ! "$cc" -fsanitize=fuzzer,address,undefined "$probe/p.c" -o "$probe/p" >"$probe/log" 2>&1; then
  msg="fuzz.sh: $cc with libFuzzer is not available (Debian: apt-get install clang libclang-rt-14-dev; scripts/setup.sh does)"
  if [ $skip_if_absent -eq 1 ]; then
    echo "$msg; skipping the fuzz targets"
    exit 0
  fi
  echo "$msg" >&2
  cat "$probe/log" >&2
  exit 2
fi

bdir=build-fuzz
mkdir -p "$bdir/logs"
echo "== fuzz.sh: building ${targets[*]} in $bdir"
if ! CC=$cc cmake -S . -B "$bdir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGRAPHC_FUZZ=ON -DBUILD_TESTING=OFF \
    -DGRAPHC_LIBCLANG=OFF \
    >"$bdir/logs/configure.log" 2>&1; then
  cat "$bdir/logs/configure.log"
  exit 2
fi
build_targets=()
for t in "${targets[@]}"; do build_targets+=(--target "fuzz_$t"); done
if ! cmake --build "$bdir" -j2 "${build_targets[@]}" >"$bdir/logs/build.log" 2>&1; then
  tail -n 60 "$bdir/logs/build.log"
  exit 2
fi
[ $build_only -eq 1 ] && exit 0

max_len() { # the longest input libFuzzer may make for a target
  case "$1" in onnx) echo 16384 ;; text) echo 8192 ;; npy) echo 4096 ;; builder) echo 2048 ;; esac
}

# Runs one target; writes its summary line to $bdir/logs/TARGET.summary.
run_target() {
  local t=$1 log="$bdir/logs/$1.log" regdir="tests/fuzz/regressions/$1" work="$bdir/corpus/$1"
  mkdir -p "$regdir" "$work"
  local marker="$bdir/logs/$t.start"
  touch "$marker"
  local opts=(-max_total_time="$time_s" -timeout=25 -rss_limit_mb=2048 -malloc_limit_mb=1024
              -max_len="$(max_len "$t")" -print_final_stats=1 -artifact_prefix="$regdir/" -seed="$seed")
  [ $keep_going -eq 1 ] && opts+=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
  local start=$SECONDS
  ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
    "$bdir/tests/fuzz/fuzz_$t" "${opts[@]}" "$work" "tests/fuzz/corpus/$t" >"$log" 2>&1
  local rc=$? secs=$((SECONDS - start))
  local findings
  findings=$(find "$regdir" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'timeout-*' -o -name 'leak-*' \
             -o -name 'oom-*' \) -newer "$marker" | sort)
  local n_find=0
  [ -n "$findings" ] && n_find=$(printf '%s\n' "$findings" | wc -l)
  [ $rc -ne 0 ] && [ $n_find -eq 0 ] && n_find=1 # e.g. a crash in the seeds before any artifact
  # The last status line: "#N ... cov: C ft: F corp: K/..." (or, in fork mode, "#N: cov: C ... corp: K").
  local last execs cov corp
  last=$(grep -E '^#[0-9]+:?[[:space:]]' "$log" | tail -n 1)
  execs=$(grep -oE 'stat::number_of_executed_units: [0-9]+' "$log" | grep -oE '[0-9]+$' | tail -n 1)
  [ -z "$execs" ] && execs=$(printf '%s' "$last" | grep -oE '^#[0-9]+' | tr -d '#')
  cov=$(printf '%s' "$last" | grep -oE 'cov: [0-9]+' | grep -oE '[0-9]+')
  corp=$(find "$work" -type f | wc -l)
  local rate=0
  [ "$secs" -gt 0 ] && [ -n "$execs" ] && rate=$((execs / secs))
  {
    printf 'fuzz_%s: %d s, %s executions (%d/s), cov %s, corpus %s (+ %d seeds), findings %d' "$t" "$secs" \
      "${execs:-?}" "$rate" "${cov:-?}" "$corp" "$(find "tests/fuzz/corpus/$t" -type f | wc -l)" "$n_find"
    [ "$n_find" -gt 0 ] && printf ' (log: %s)\n%s' "$log" "$(printf '%s\n' "$findings" | sed 's/^/  /')"
    printf '\n'
  } >"$bdir/logs/$t.summary"
  rm -f "$marker"
  return $((n_find > 0))
}

echo "== fuzz.sh: running ${targets[*]} for $time_s s each, $jobs at a time"
pids=()
for t in "${targets[@]}"; do
  run_target "$t" &
  pids+=($!)
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
done
wait
rc=0
for t in "${targets[@]}"; do
  cat "$bdir/logs/$t.summary"
  grep -q 'findings 0$' "$bdir/logs/$t.summary" || rc=1
done
if [ $rc -ne 0 ]; then
  echo "fuzz.sh: findings above; each input is in tests/fuzz/regressions/TARGET/ (replay: build/tests/fuzz/fuzz_replay_TARGET FILE)"
fi
exit $rc
