#!/usr/bin/env bash
# test.sh — the whole test suite, as CI runs it:
#   1. installs the dependencies (scripts/setup.sh);
#   2. a normal build in build/ and `ctest` over it;
#   3. a sanitizer build in build-asan/ (-DGRAPHC_SANITIZE=ON: the compiler and the
#      tests run under AddressSanitizer + UndefinedBehaviorSanitizer, and with
#      GRAPHC_SANITIZE=1 the generated C programs are built with them too, for the
#      portable C kernels: GRAPHC_CPU_FLAGS= keeps the ASan builds of hundreds of
#      programs affordable, and the vector kernels run under the sanitizers in
#      runtime_*_native) and `ctest` again; it is configured with -DGRAPHC_LIBCLANG=OFF, so CI
#      builds and tests graphc both with libclang (build/, AUTO finds libclang-dev) and
#      without it (graphc's own reader of --ops files; unit_custom_read is skipped there).
# Exits non-zero if either run fails.
set -uo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh || exit 1
jobs=$(nproc 2>/dev/null || echo 2)

build_and_test() { # DIR CMAKE-ARGS...
  local dir=$1
  shift
  mkdir -p "$dir"
  echo "== configure and build $dir"
  cmake -S . -B "$dir" "$@" >"$dir/configure.log" 2>&1 || { cat "$dir/configure.log"; return 1; }
  cmake --build "$dir" -j"$jobs" >"$dir/build.log" 2>&1 || { tail -n 150 "$dir/build.log"; return 1; }
  echo "== ctest in $dir"
  (cd "$dir" && ctest --output-on-failure -j2)
}

rc=0
build_and_test build -DCMAKE_BUILD_TYPE=Release || rc=1
(
  export GRAPHC_SANITIZE=1 GRAPHC_CPU_FLAGS= ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1
  build_and_test build-asan -DCMAKE_BUILD_TYPE=Debug -DGRAPHC_SANITIZE=ON -DGRAPHC_LIBCLANG=OFF
) || rc=1
exit $rc
