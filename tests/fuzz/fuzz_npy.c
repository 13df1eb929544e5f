/* fuzz_npy.c — bytes → the .npy reader (npy_parse, what `graphc run` and
 * --bind read inputs with). A file whose header promises more data than it
 * holds is refused before anything is allocated, so no cap is needed; an
 * accepted array is re-encoded and parsed again, and must come back equal. */
#include "fuzz.h"

#include "frontend/npy.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Diag d = {0};
    NpyArray a;
    if (npy_parse(data, size, "fuzz.npy", &a, &d)) return 0;
    GC_ASSERT(a.data && a.nbytes == (size_t)ir_numel(&a.shape) * ir_dtype_size(a.dtype));
    size_t len;
    void *img = npy_encode(a.dtype, &a.shape, a.data, &len);
    NpyArray b;
    GC_ASSERT(img && npy_parse(img, len, "re-encoded", &b, &d) == 0);
    GC_ASSERT(b.dtype == a.dtype && ir_shape_eq(&a.shape, &b.shape) && b.nbytes == a.nbytes);
    GC_ASSERT(a.nbytes == 0 || memcmp(a.data, b.data, a.nbytes) == 0);
    npy_free(&b);
    free(img);
    npy_free(&a);
    return 0;
}
