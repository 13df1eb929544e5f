/* backends.c — the list of backends (one row per target) and the weights
 * mode names shared by every backend and by the command line. */
#include "backend.h"

#include <string.h>

extern const Backend backend_c;    /* backend/c/cgen.c */
extern const Backend backend_cuda; /* backend/cuda/cuda_backend.c */

const Backend *const backend_list[] = {&backend_c, &backend_cuda, NULL};

const Backend *backend_find(const char *name)
{
    for (int i = 0; backend_list[i]; i++)
        if (name && strcmp(backend_list[i]->name, name) == 0) return backend_list[i];
    return NULL;
}

static const char *const weights_names[BACKEND_WEIGHTS_COUNT] = {"incbin", "c-array", "file"};

int backend_weights_parse(const char *name, BackendWeights *out)
{
    for (int i = 0; i < BACKEND_WEIGHTS_COUNT; i++)
        if (name && strcmp(name, weights_names[i]) == 0) {
            *out = (BackendWeights)i;
            return 0;
        }
    return -1;
}
