/* pipeline.c — the compile pipeline as data: one array of {name, fn}. The
 * driver runs it in order, verifies the graph after every pass, and prints
 * the text IR after a named pass (or all) for --print-after. */
#include "passes.h"
#include "../ir/text.h"

#include <string.h>

const Pass pass_pipeline[] = {
    {"infer-shapes", pass_infer_shapes},
    {"fold-constants", pass_fold_constants},
    {"plan-memory", pass_plan_memory},
    {NULL, NULL},
};

int pass_run_pipeline(Graph *g, const char *print_after, Writer *dump, Diag *d)
{
    if (print_after && strcmp(print_after, "all") != 0) {
        int found = 0;
        for (const Pass *p = pass_pipeline; p->name; p++) found |= strcmp(p->name, print_after) == 0;
        if (!found) {
            char names[256] = "";
            for (const Pass *p = pass_pipeline; p->name; p++) {
                strncat(names, " ", sizeof names - strlen(names) - 1);
                strncat(names, p->name, sizeof names - strlen(names) - 1);
            }
            return diag_error(d, "unknown pass '%s' for --print-after (passes:%s, or all)", print_after, names);
        }
    }
    if (ir_verify(g, d)) return -1;
    for (const Pass *p = pass_pipeline; p->name; p++) {
        if (p->fn(g, d)) return -1;
        if (ir_verify(g, d)) return -1;
        if (print_after && dump && (strcmp(print_after, "all") == 0 || strcmp(print_after, p->name) == 0)) {
            w_line(dump, "# after %s", p->name);
            ir_print(g, dump, 1);
        }
    }
    return 0;
}
