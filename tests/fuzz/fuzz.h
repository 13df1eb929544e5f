/* fuzz.h — what the fuzz targets in tests/fuzz share.
 *
 * Each target (fuzz_<name>.c) defines LLVMFuzzerTestOneInput and nothing
 * else that libFuzzer calls. Built with clang -fsanitize=fuzzer it is a
 * libFuzzer binary (scripts/fuzz.sh); linked with replay.c instead, by the
 * normal compiler, it is a plain program that feeds files to the same
 * function (the fuzz_replay_* ctest entries), so every crash kept under
 * tests/fuzz/regressions/ is replayed by every test run.
 *
 * A finding must be a bug, not a legitimate model that asks for more than a
 * fuzzer machine has: the targets refuse inputs over the caps below before
 * they reach graphc, and scripts/fuzz.sh runs libFuzzer with a malloc and
 * RSS limit and a per-input timeout as a backstop.
 */
#ifndef GRAPHC_FUZZ_H
#define GRAPHC_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

/* Elements a tensor the harness lets through may hold (4 MiB of f32). */
#define FUZZ_MAX_ELEMS ((int64_t)1 << 20)

/* Compiles g at -O2 through the whole pipeline and the default backend into
 * memory (api_compile_to_writer); errors are expected and dropped. Frees g. */
void fuzz_compile(Graph *g);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
