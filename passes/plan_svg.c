/* plan_svg.c — the memory plan drawn, TFLM-style "printable plan".
 *
 * The picture is the planner's own view: time runs left to right over the
 * schedule (step s is node g->nodes[s], drawn as the interval [s, s+1)),
 * bytes run bottom to top over the arena. Each buffer of pass_plan_entries
 * is a rectangle spanning steps [first, last+1) and bytes
 * [offset, offset+size); two rectangles overlap exactly when the plan gives
 * the same bytes to two buffers that are live at the same time, so a
 * correct plan is a picture without overlaps. A dashed line marks the arena
 * size, a dotted one the live-set lower bound.
 *
 * Coordinates are computed in integer thousandths of a pixel from the byte
 * and step numbers, so shared edges of neighbouring rectangles are the same
 * number and the file is byte-identical across runs and machines.
 */
#include "plan_svg.h"
#include "passes.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SVG_LEFT = 110, SVG_TOP = 40, SVG_PW = 720, SVG_PH = 480, SVG_RIGHT = 190, SVG_BOTTOM = 60 };

typedef struct PlanFrame {
    int64_t steps, bytes; /* the axes' extents */
} PlanFrame;

/* Pixel coordinates in thousandths. */
static int64_t px_step(const PlanFrame *f, int64_t s)
{
    return SVG_LEFT * 1000 + llround((double)s * SVG_PW * 1000.0 / (double)f->steps);
}

static int64_t px_byte(const PlanFrame *f, int64_t b)
{
    return (SVG_TOP + SVG_PH) * 1000 - llround((double)b * SVG_PH * 1000.0 / (double)f->bytes);
}

static void w_milli(Writer *w, int64_t m)
{
    if (m < 0) { w_puts(w, "-"); m = -m; }
    w_printf(w, "%" PRId64 ".%03" PRId64, m / 1000, m % 1000);
}

/* Text escaped for XML character data and attribute values. */
static void w_xml(Writer *w, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '&') w_puts(w, "&amp;");
        else if (c == '<') w_puts(w, "&lt;");
        else if (c == '>') w_puts(w, "&gt;");
        else if (c == '"') w_puts(w, "&quot;");
        else if (c == '\'') w_puts(w, "&apos;");
        else if (c < 0x20 || c == 0x7f) w_puts(w, " ");
        else w_printf(w, "%c", c);
    }
}

static void hline(Writer *w, const PlanFrame *f, int64_t bytes, const char *style, const char *text)
{
    int64_t y = px_byte(f, bytes);
    w_printf(w, "<line x1=\"%d\" x2=\"%d\" y1=\"", SVG_LEFT, SVG_LEFT + SVG_PW + 10);
    w_milli(w, y);
    w_puts(w, "\" y2=\"");
    w_milli(w, y);
    w_printf(w, "\" %s/>\n", style);
    w_printf(w, "<text x=\"%d\" y=\"", SVG_LEFT + SVG_PW + 14);
    w_milli(w, y + 4000);
    w_printf(w, "\" font-size=\"11\">%s</text>\n", text);
}

static void axes(Writer *w, const PlanFrame *f)
{
    int x0 = SVG_LEFT, y0 = SVG_TOP + SVG_PH;
    w_printf(w, "<g class=\"axes\" stroke=\"#000\" stroke-width=\"1\">\n");
    w_printf(w, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", x0, y0, x0 + SVG_PW, y0);
    w_printf(w, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", x0, y0, x0, SVG_TOP);
    w_puts(w, "</g>\n<g class=\"ticks\" font-size=\"10\">\n");
    int64_t every = (f->steps + 19) / 20;
    for (int64_t s = 0; s <= f->steps; s += every) {
        int64_t x = px_step(f, s);
        w_puts(w, "<line x1=\"");
        w_milli(w, x);
        w_puts(w, "\" x2=\"");
        w_milli(w, x);
        w_printf(w, "\" y1=\"%d\" y2=\"%d\" stroke=\"#000\"/>\n", y0, y0 + 5);
        w_puts(w, "<text x=\"");
        w_milli(w, x);
        w_printf(w, "\" y=\"%d\" text-anchor=\"middle\">%" PRId64 "</text>\n", y0 + 17, s);
    }
    for (int k = 0; k <= 4; k++) {
        int64_t b = f->bytes * k / 4, y = px_byte(f, b);
        w_puts(w, "<line x1=\"");
        w_printf(w, "%d\" x2=\"%d\" y1=\"", x0 - 5, x0);
        w_milli(w, y);
        w_puts(w, "\" y2=\"");
        w_milli(w, y);
        w_puts(w, "\" stroke=\"#000\"/>\n");
        w_printf(w, "<text x=\"%d\" y=\"", x0 - 8);
        w_milli(w, y + 3500);
        w_printf(w, "\" text-anchor=\"end\">%" PRId64 "</text>\n", b);
    }
    w_puts(w, "</g>\n");
    w_printf(w, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">schedule step</text>\n",
             x0 + SVG_PW / 2, y0 + 40);
    w_printf(w,
             "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\" "
             "transform=\"rotate(-90 %d %d)\">bytes (arena offset)</text>\n",
             24, SVG_TOP + SVG_PH / 2, 24, SVG_TOP + SVG_PH / 2);
}

void pass_plan_svg(const Graph *g, Writer *w)
{
    static const char *const fills[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072",
                                        "#80b1d3", "#fdb462", "#b3de69", "#fccde5"};
    PlanEntry *e = NULL;
    int n = pass_plan_entries(g, &e);
    PlanFrame f = {g->n_nodes, g->arena_bytes};
    for (int i = 0; i < n; i++) {
        if (e[i].last + 1 > f.steps) f.steps = e[i].last + 1;
        if (e[i].offset + e[i].size > f.bytes) f.bytes = e[i].offset + e[i].size;
    }
    if (f.steps < 1) f.steps = 1;
    if (f.bytes < 1) f.bytes = 1;
    int width = SVG_LEFT + SVG_PW + SVG_RIGHT, height = SVG_TOP + SVG_PH + SVG_BOTTOM;
    w_puts(w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    w_printf(w,
             "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
             "viewBox=\"0 0 %d %d\" font-family=\"Helvetica, Arial, sans-serif\">\n",
             width, height, width, height);
    w_puts(w, "<title>memory plan of ");
    w_xml(w, g->name ? g->name : "graph");
    w_puts(w, "</title>\n");
    w_printf(w, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", width, height);
    w_printf(w, "<text x=\"%d\" y=\"%d\" font-size=\"13\">", SVG_LEFT, SVG_TOP - 16);
    w_puts(w, "memory plan of ");
    w_xml(w, g->name ? g->name : "graph");
    w_printf(w,
             ": %d buffer%s, %d steps, arena %" PRId64 " bytes, lower bound %" PRId64 " bytes, no-reuse %" PRId64
             " bytes</text>\n",
             n, n == 1 ? "" : "s", g->n_nodes, g->arena_bytes, g->plan_lower_bound, g->plan_no_reuse);
    axes(w, &f);

    w_puts(w, "<g class=\"buffers\" stroke=\"#333\" stroke-width=\"0.5\">\n");
    for (int i = 0; i < n; i++) {
        const PlanEntry *p = &e[i];
        int64_t x0 = px_step(&f, p->first), x1 = px_step(&f, (int64_t)p->last + 1);
        int64_t y0 = px_byte(&f, p->offset + p->size), y1 = px_byte(&f, p->offset);
        w_printf(w, "<rect class=\"%s\" x=\"", p->is_workspace ? "workspace" : "buffer");
        w_milli(w, x0);
        w_puts(w, "\" y=\"");
        w_milli(w, y0);
        w_puts(w, "\" width=\"");
        w_milli(w, x1 - x0);
        w_puts(w, "\" height=\"");
        w_milli(w, y1 - y0);
        if (p->is_workspace) w_puts(w, "\" fill=\"#d9d9d9\" stroke-dasharray=\"3,2\">");
        else w_printf(w, "\" fill=\"%s\">", fills[i % 8]);
        w_puts(w, "<title>");
        w_xml(w, p->name);
        w_printf(w, ": bytes [%" PRId64 ", %" PRId64 ") (%" PRId64 " bytes), steps %d..%d</title></rect>\n",
                 p->offset, p->offset + p->size, p->size, p->first, p->last);
        /* a label when it fits: ~6.5 px per character at font-size 10 */
        size_t len = strlen(p->name);
        if ((double)(x1 - x0) >= (6.5 * (double)len + 4) * 1000 && y1 - y0 >= 12000) {
            w_puts(w, "<text class=\"label\" x=\"");
            w_milli(w, (x0 + x1) / 2);
            w_puts(w, "\" y=\"");
            w_milli(w, (y0 + y1) / 2 + 3500);
            w_puts(w, "\" font-size=\"10\" text-anchor=\"middle\" stroke=\"none\">");
            w_xml(w, p->name);
            w_puts(w, "</text>\n");
        }
    }
    w_puts(w, "</g>\n");
    if (n == 0)
        w_printf(w, "<text x=\"%d\" y=\"%d\" font-size=\"12\">no buffers</text>\n", SVG_LEFT + 10,
                 SVG_TOP + SVG_PH / 2);
    char text[96];
    snprintf(text, sizeof text, "arena %" PRId64 " bytes", g->arena_bytes);
    hline(w, &f, g->arena_bytes, "class=\"arena\" stroke=\"#c00\" stroke-width=\"1.5\" stroke-dasharray=\"6,3\"",
          text);
    if (g->plan_lower_bound > 0 && g->plan_lower_bound < g->arena_bytes) {
        snprintf(text, sizeof text, "lower bound %" PRId64 " bytes", g->plan_lower_bound);
        hline(w, &f, g->plan_lower_bound,
              "class=\"lower-bound\" stroke=\"#555\" stroke-width=\"1\" stroke-dasharray=\"2,2\"", text);
    }
    w_puts(w, "</svg>\n");
    free(e);
}

void pass_plan_text(const Graph *g, Writer *w)
{
    PlanEntry *e = NULL;
    int n = pass_plan_entries(g, &e);
    w_printf(w,
             "# memory plan of %s: %d buffer%s, %d steps, arena %" PRId64 " bytes, lower bound %" PRId64
             " bytes, no-reuse %" PRId64 " bytes\n",
             g->name ? g->name : "graph", n, n == 1 ? "" : "s", g->n_nodes, g->arena_bytes, g->plan_lower_bound,
             g->plan_no_reuse);
    w_puts(w, "# offset size first last name\n");
    for (int i = 0; i < n; i++)
        w_printf(w, "%" PRId64 " %" PRId64 " %d %d %s\n", e[i].offset, e[i].size, e[i].first, e[i].last, e[i].name);
    free(e);
}
