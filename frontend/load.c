/* load.c — picks a model loader by file extension. The table is the only
 * place that knows which formats exist: the text IR and ONNX. Every
 * loader reports errors as "FILE: ..." through the Diag. */
#include "load.h"
#include "../ir/text.h"
#include "onnx_import.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

const ModelFormat model_formats[] = {
    {".gir", ir_parse_file, NULL},
    {".onnx", NULL, onnx_load},
    {NULL, NULL, NULL},
};

static int has_ext(const char *path, const char *ext)
{
    size_t pl = strlen(path), el = strlen(ext);
    return pl > el && strcasecmp(path + pl - el, ext) == 0;
}

/* Checks --shape requests against a loaded graph with static shapes. */
static Graph *check_static_shapes(Graph *g, const LoadOptions *o, Diag *d)
{
    for (int i = 0; g && o && i < o->n_shapes; i++) {
        const InputShape *s = &o->shapes[i];
        const Value *v = NULL;
        for (int k = 0; k < g->n_inputs && !v; k++)
            if (strcmp(g->inputs[k]->name, s->name) == 0) v = g->inputs[k];
        char a[256], b[256];
        const char *flag = s->max ? "--max-shape" : "--shape";
        Shape want = s->shape;
        if (s->max && v) memcpy(want.sym, v->shape.sym, sizeof want.sym); /* the text gives the bounds */
        if (!v) diag_error(d, "%s names '%s', which is not a graph input", flag, s->name);
        else if (!ir_shape_eq(&v->shape, &want))
            diag_error(d, "%s %s=%s differs from the input's shape %s", flag, s->name,
                       ir_shape_str(&s->shape, a, sizeof a), ir_shape_str_g(g, &v->shape, b, sizeof b));
        else continue;
        ir_graph_free(g);
        return NULL;
    }
    return g;
}

Graph *load_model(const char *path, Diag *d) { return load_model_opts(path, NULL, d); }

Graph *load_model_opts(const char *path, const LoadOptions *opts, Diag *d)
{
    for (const ModelFormat *f = model_formats; f->ext; f++) {
        if (!has_ext(path, f->ext)) continue;
        if (f->load_opts) return f->load_opts(path, opts, d);
        return check_static_shapes(f->load(path, d), opts, d);
    }

    char list[128] = "";
    for (const ModelFormat *f = model_formats; f->ext; f++) {
        if (f != model_formats) strncat(list, " or ", sizeof list - strlen(list) - 1);
        strncat(list, f->ext, sizeof list - strlen(list) - 1);
    }
    const char *saved = d ? d->file : NULL;
    if (d && !d->file) d->file = path;
    diag_error(d, "unknown model format (expected %s)", list);
    if (d) d->file = saved;
    return NULL;
}
