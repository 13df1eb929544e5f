/* fuzz_text.c — bytes → the text-IR parser (ir_parse) → the -O2 pipeline →
 * C source in memory. On the way it checks the text IR's promise
 * (docs/text-ir.md): for a graph the parser accepted, printing, parsing the
 * print and printing again gives the same text byte for byte.
 *
 * Size cap: `random(seed=...)` data is generated at parse time, up to 1 GiB
 * per constant, so a ten-byte line can legitimately ask for a gigabyte. The
 * harness refuses an input when the shape right before a `random(` on its
 * line holds more than FUZZ_MAX_ELEMS elements (or is not a plain list of
 * numbers); lists and hex data are as long as the input, so need no cap. */
#include "fuzz.h"

#include "ir/text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1 when every random(...) constant in text is small enough to generate. */
static int random_sizes_ok(const char *text)
{
    for (const char *r = strstr(text, "random("); r; r = strstr(r + 1, "random(")) {
        const char *close = r, *open;
        while (close > text && *close != ']' && *close != '\n') close--;
        if (*close != ']') continue; /* no shape before it: the parser refuses the line */
        open = close;
        while (open > text && *open != '[' && *open != '\n') open--;
        if (*open != '[') continue;
        int64_t n = 1;
        for (const char *p = open + 1; p < close;) {
            while (p < close && (*p == ' ' || *p == '\t' || *p == ',')) p++;
            if (p == close) break;
            if (*p < '0' || *p > '9') return 0; /* symbolic or odd: refuse rather than guess */
            int64_t dim = 0;
            while (p < close && *p >= '0' && *p <= '9') {
                dim = dim * 10 + (*p++ - '0');
                if (dim > FUZZ_MAX_ELEMS) return 0;
            }
            n *= dim;
            if (n > FUZZ_MAX_ELEMS) return 0;
        }
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    GC_ASSERT(text);
    memcpy(text, data, size);
    text[size] = 0;
    if (!random_sizes_ok(text)) {
        free(text);
        return 0;
    }
    Diag d = {0};
    Graph *g = ir_parse(text, size, "fuzz.gir", &d);
    free(text);
    if (!g) return 0;

    Writer w1, w2;
    w_init(&w1);
    w_init(&w2);
    ir_print(g, &w1, 0);
    Diag d2 = {0};
    Graph *g2 = ir_parse(w1.buf ? w1.buf : "", w1.len, "printed.gir", &d2);
    if (!g2) {
        fprintf(stderr, "fuzz_text: the printed graph does not parse: %s\n%.*s", d2.msg, (int)w1.len, w1.buf);
        abort();
    }
    ir_print(g2, &w2, 0);
    if (w1.len != w2.len || memcmp(w1.buf, w2.buf, w1.len) != 0) {
        fprintf(stderr, "fuzz_text: print(parse(print(g))) != print(g)\n--- first\n%.*s--- second\n%.*s", (int)w1.len,
                w1.buf, (int)w2.len, w2.buf);
        abort();
    }
    w_free(&w1);
    w_free(&w2);
    ir_graph_free(g2);
    fuzz_compile(g);
    return 0;
}
