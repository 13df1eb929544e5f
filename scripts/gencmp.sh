#!/usr/bin/env bash
# gencmp.sh — did a compiler change alter the generated code?
#
#   bash scripts/gencmp.sh OLD_GRAPHC NEW_GRAPHC [DIR ...]
#
# Compiles every model under the DIRs (default: tests/ops) — *.gir files
# (except the *_err_* rejection tests) and *.onnx files — with both graphc
# binaries at -O0 and -O2 (`compile MODEL -o OUT --name m`) and compares the
# generated m.c and m.h byte for byte; when both compiles fail it compares
# their error messages, and it notes when only one of them fails. One line
# per difference on stdout (DIFF / ERR / RC), then a count. With
# IGNORE_RUNTIME_INCLUDES=1 the lines that include runtime sources
# (`#include "gcrt_...`) are left out of the comparison.
#
# Wider corpora: the ONNX node suite (python3 ../shared/tools/
# gen_onnx_node_suite.py DIR) and the exported torch models
# (/usr/bin/python3 tests/models/torch_models.py --export-only --work DIR).
# Exit status 0 when nothing differs, 1 otherwise.
set -uo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 OLD_GRAPHC NEW_GRAPHC [DIR ...]" >&2
  exit 2
fi
old=$(readlink -f "$1") new=$(readlink -f "$2")
shift 2
[ $# -gt 0 ] || set -- tests/ops
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

same() { # FILE_A FILE_B
  if [ -n "${IGNORE_RUNTIME_INCLUDES:-}" ]; then
    cmp -s <(grep -v '^#include "gcrt[._]\|^/\* the runtime kernels this model calls' "$1") \
           <(grep -v '^#include "gcrt[._]\|^/\* the runtime kernels this model calls' "$2")
  else
    cmp -s "$1" "$2"
  fi
}

compare() { # MODEL INDEX LEVEL
  local m=$1 d="$work/$2_$3"
  mkdir -p "$d"
  "$old" compile "$m" -o "$d/a" --name m "-O$3" >"$d/a.log" 2>&1; local ra=$?
  "$new" compile "$m" -o "$d/b" --name m "-O$3" >"$d/b.log" 2>&1; local rb=$?
  if [ $ra != $rb ]; then echo "RC $m -O$3 (exit $ra, then $rb)"
  elif [ $ra != 0 ]; then cmp -s "$d/a.log" "$d/b.log" || echo "ERR $m -O$3"
  else
    for f in m.c m.h; do same "$d/a/$f" "$d/b/$f" || echo "DIFF $m -O$3 $f"; done
  fi
  rm -rf "$d"
}
export -f compare same
export old new work IGNORE_RUNTIME_INCLUDES

find "$@" \( -name '*.gir' ! -name '*_err_*' -o -name '*.onnx' \) | sort >"$work/models"
awk '{print $0 " " NR " 2"; print $0 " " NR " 0"}' "$work/models" |
  xargs -P "$(nproc 2>/dev/null || echo 2)" -n 3 bash -c 'compare "$0" "$1" "$2"' | sort >"$work/diffs"
cat "$work/diffs"
n=$(wc -l <"$work/diffs")
echo "models: $(wc -l <"$work/models"); compiles: $(($(wc -l <"$work/models") * 4)); differing: $n"
[ "$n" -eq 0 ]
