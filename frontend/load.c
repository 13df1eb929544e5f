/* load.c — picks a model loader by file extension. The table is the only
 * place that knows which formats exist: the text IR today, ONNX next (one
 * more row). Every loader reports errors as "FILE: ..." through the Diag. */
#include "load.h"
#include "../ir/text.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

const ModelFormat model_formats[] = {
    {".gir", ir_parse_file},
    {NULL, NULL},
};

/* Appended to the "unknown model format" error until the ONNX row exists. */
static const char *const formats_note = "; ONNX import comes later";

static int has_ext(const char *path, const char *ext)
{
    size_t pl = strlen(path), el = strlen(ext);
    return pl > el && strcasecmp(path + pl - el, ext) == 0;
}

Graph *load_model(const char *path, Diag *d)
{
    for (const ModelFormat *f = model_formats; f->ext; f++)
        if (has_ext(path, f->ext)) return f->load(path, d);

    char list[128] = "";
    for (const ModelFormat *f = model_formats; f->ext; f++) {
        if (f != model_formats) strncat(list, " or ", sizeof list - strlen(list) - 1);
        strncat(list, f->ext, sizeof list - strlen(list) - 1);
    }
    const char *saved = d ? d->file : NULL;
    if (d && !d->file) d->file = path;
    diag_error(d, "unknown model format (expected %s%s)", list, formats_note);
    if (d) d->file = saved;
    return NULL;
}
