/* fuzz_onnx.c — bytes → the ONNX importer (onnx_load_image: the bounded
 * protobuf reader, opset upgraders, control-flow unrolling) → the -O2
 * pipeline → C source in memory. The image has no folder, so external data
 * is refused rather than read from wherever the fuzzer runs. ONNX cannot ask
 * for big allocations before the pipeline (initializers carry their bytes;
 * input shapes allocate nothing) and constant folding caps what it creates,
 * so the harness needs no size check of its own. */
#include "fuzz.h"

#include "frontend/onnx_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Diag d = {0};
    d.file = "fuzz.onnx";
    Graph *g = onnx_load_image(data, size, NULL, NULL, &d);
    if (g) fuzz_compile(g);
    return 0;
}
