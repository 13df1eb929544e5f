/* fuzz_common.c — the compile step every graph-producing fuzz target ends
 * with: the -O2 pipeline and the C backend rendering into a Writer, so a
 * fuzzer run touches no file (see fuzz.h). */
#include "fuzz.h"

#include "api/compile.h"

void fuzz_compile(Graph *g)
{
    Diag d = {0};
    CompileJob job = {0};
    job.opt_level = 2;
    job.out.name = "m";
    Writer out;
    w_init(&out);
    api_compile_to_writer(g, &out, &job, &d);
    w_free(&out);
    ir_graph_free(g);
}
