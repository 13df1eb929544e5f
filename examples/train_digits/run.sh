#!/usr/bin/env bash
# run.sh — trains examples/train_digits/digits_mlp.gir on scikit-learn's digits
# with the C code graphc generates, and prints the test accuracy.
#   bash examples/train_digits/run.sh [EPOCHS]
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/setup.sh >/dev/null
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target graphc >/dev/null
out=build/train_digits
rm -rf "$out"
build/graphc compile examples/train_digits/digits_mlp.gir -o "$out/model" --weights=c-array \
  --train --loss=cross-entropy:logits --optimizer=sgd:lr=0.1,momentum=0.9 --report
/usr/bin/python3 examples/train_digits/prepare_digits.py "$out/digits.bin"
cc -O2 -std=c99 -Wall -Wextra -Werror -I"$out/model" examples/train_digits/train_digits.c \
  "$out/model/digits_mlp.c" "$out/model/digits_mlp_weights.c" -o "$out/train_digits" -lm
"$out/train_digits" "$out/digits.bin" "${1:-10}"
