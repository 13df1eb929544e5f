/* plan_svg.c — the memory plan drawn, TFLM-style "printable plan".
 *
 * The picture is the planner's own view: time runs left to right over the
 * schedule (step s is node g->nodes[s], drawn as the interval [s, s+1)),
 * bytes run bottom to top over the arena. Each buffer of pass_plan_entries
 * is a rectangle spanning steps [first, last+1) and bytes
 * [offset, offset+size); two rectangles overlap exactly when the plan gives
 * the same bytes to two buffers that are live at the same time, so a
 * correct plan is a picture without overlaps. A dashed line marks the arena
 * size, a dotted one the live-set lower bound. The SVG_KEYS largest
 * buffers carry a number in their rectangle and a row in the legend under
 * the plot (name, size, steps, offset): names rarely fit in rectangles a
 * few steps wide, and the largest buffers are the ones a reader looks for.
 * Other rectangles show their name where it fits; all have it as tooltip.
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
/* The legend under the plot: the SVG_KEYS largest buffers, one row each. */
enum { SVG_KEYS = 10, SVG_KEY_ROW = 16, SVG_KEY_HEAD = 24 };

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

/* A horizontal line at `bytes` with its text at the right, `dy` thousandths
 * of a pixel below the line (to keep two close lines' texts apart). */
static void hline(Writer *w, const PlanFrame *f, int64_t bytes, const char *style, const char *text, int64_t dy)
{
    int64_t y = px_byte(f, bytes);
    w_printf(w, "<line x1=\"%d\" x2=\"%d\" y1=\"", SVG_LEFT, SVG_LEFT + SVG_PW + 10);
    w_milli(w, y);
    w_puts(w, "\" y2=\"");
    w_milli(w, y);
    w_printf(w, "\" %s/>\n", style);
    w_printf(w, "<text x=\"%d\" y=\"", SVG_LEFT + SVG_PW + 14);
    w_milli(w, y + 4000 + dy);
    w_printf(w, "\" font-size=\"11\">%s</text>\n", text);
}

/* n bytes for people: "512 B", "1.5 KiB", "3.06 MiB", "1.25 GiB". */
static void human_bytes(int64_t n, char *buf, size_t cap)
{
    static const char *const unit[] = {"KiB", "MiB", "GiB", "TiB"};
    if (n < 1024) {
        snprintf(buf, cap, "%" PRId64 " B", n);
        return;
    }
    double v = (double)n / 1024;
    int u = 0;
    while (v >= 1024 && u < 3) {
        v /= 1024;
        u++;
    }
    snprintf(buf, cap, "%.*f %s", v < 10 ? 2 : v < 100 ? 1 : 0, v, unit[u]);
}

/* The indices of the SVG_KEYS largest value buffers (workspaces aside; by
 * size, then plan order) into keys; returns their number. */
static int largest(const PlanEntry *e, int n, int *keys)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (e[i].size <= 0 || e[i].is_workspace) continue;
        int at = k < SVG_KEYS ? k++ : SVG_KEYS;
        while (at > 0 && e[keys[at - 1]].size < e[i].size) {
            if (at < SVG_KEYS) keys[at] = keys[at - 1];
            at--;
        }
        if (at < SVG_KEYS) keys[at] = i;
    }
    return k;
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
    int keys[SVG_KEYS], n_ws = 0, big_ws = -1;
    int n_keys = largest(e, n, keys);
    for (int i = 0; i < n; i++)
        if (e[i].is_workspace) {
            n_ws++;
            if (big_ws < 0 || e[i].size > e[big_ws].size) big_ws = i;
        }
    int legend_rows = n_keys + (n_ws > 0);
    int legend_top = SVG_TOP + SVG_PH + SVG_BOTTOM;
    int width = SVG_LEFT + SVG_PW + SVG_RIGHT;
    int height = legend_top + (legend_rows ? SVG_KEY_HEAD + legend_rows * SVG_KEY_ROW + 8 : 0);
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
        int key = 0;
        for (int k = 0; k < n_keys && !key; k++)
            if (keys[k] == i) key = k + 1;
        /* one of the largest: its legend number, haloed so that it reads on
         * any fill and over neighbours when the rectangle is narrow */
        if (key) {
            w_printf(w, "<text class=\"key\" x=\"");
            w_milli(w, (x0 + x1) / 2);
            w_puts(w, "\" y=\"");
            w_milli(w, (y0 + y1) / 2 + 4000);
            w_printf(w, "\" font-size=\"11\" font-weight=\"bold\" text-anchor=\"middle\" stroke=\"#fff\" "
                        "stroke-width=\"3\" paint-order=\"stroke\">%d</text>\n", key);
            continue;
        }
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
          text, 0);
    if (g->plan_lower_bound > 0 && g->plan_lower_bound < g->arena_bytes) {
        snprintf(text, sizeof text, "lower bound %" PRId64 " bytes", g->plan_lower_bound);
        int64_t gap = px_byte(&f, g->plan_lower_bound) - px_byte(&f, g->arena_bytes); /* > 0: below */
        hline(w, &f, g->plan_lower_bound,
              "class=\"lower-bound\" stroke=\"#555\" stroke-width=\"1\" stroke-dasharray=\"2,2\"", text,
              gap < 13000 ? 13000 - gap : 0);
    }
    if (legend_rows) {
        w_printf(w, "<g class=\"legend\" font-size=\"11\">\n<text x=\"%d\" y=\"%d\" font-size=\"12\">",
                 SVG_LEFT, legend_top + 12);
        if (n_keys) w_printf(w, "the %d largest buffer%s:</text>\n", n_keys, n_keys == 1 ? "" : "s");
        else w_puts(w, "no tensor buffers:</text>\n");
        for (int k = 0; k < n_keys; k++) {
            const PlanEntry *p = &e[keys[k]];
            int y = legend_top + SVG_KEY_HEAD + k * SVG_KEY_ROW;
            char size[32];
            human_bytes(p->size, size, sizeof size);
            w_printf(w, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"11\" stroke=\"#333\" stroke-width=\"0.5\" fill=\"%s\"/>\n",
                     SVG_LEFT, y - 9, p->is_workspace ? "#d9d9d9" : fills[keys[k] % 8]);
            w_printf(w, "<text class=\"legend-entry\" x=\"%d\" y=\"%d\">%d. ", SVG_LEFT + 18, y, k + 1);
            w_xml(w, p->name);
            w_printf(w, ": %s (%" PRId64 " bytes), steps %d..%d, offset %" PRId64 "</text>\n", size, p->size, p->first,
                     p->last, p->offset);
        }
        if (n_ws) {
            const PlanEntry *p = &e[big_ws];
            int y = legend_top + SVG_KEY_HEAD + n_keys * SVG_KEY_ROW;
            char size[32];
            human_bytes(p->size, size, sizeof size);
            w_printf(w, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"11\" stroke=\"#333\" stroke-width=\"0.5\" "
                        "fill=\"#d9d9d9\" stroke-dasharray=\"3,2\"/>\n", SVG_LEFT, y - 9);
            w_printf(w, "<text class=\"legend-workspaces\" x=\"%d\" y=\"%d\">%d node workspace%s (dashed grey), the "
                        "largest ", SVG_LEFT + 18, y, n_ws, n_ws == 1 ? "" : "s");
            w_xml(w, p->name);
            w_printf(w, ": %s (%" PRId64 " bytes)</text>\n", size, p->size);
        }
        w_puts(w, "</g>\n");
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
