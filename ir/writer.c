/* writer.c — growable text buffer with indentation (see writer.h). Output
 * files are written to a temporary name and renamed so that a failed run
 * never leaves a half-written file behind. */
#include "writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void w_init(Writer *w) { memset(w, 0, sizeof *w); w->at_bol = 1; }

void w_free(Writer *w) { free(w->buf); memset(w, 0, sizeof *w); }

static void w_reserve(Writer *w, size_t extra)
{
    if (w->len + extra + 1 <= w->cap) return;
    size_t cap = w->cap ? w->cap : 256;
    while (cap < w->len + extra + 1) cap *= 2;
    char *nb = realloc(w->buf, cap);
    if (!nb) { fprintf(stderr, "graphc: out of memory\n"); abort(); }
    w->buf = nb;
    w->cap = cap;
}

static void w_raw(Writer *w, const char *s, size_t n)
{
    w_reserve(w, n);
    memcpy(w->buf + w->len, s, n);
    w->len += n;
    w->buf[w->len] = 0;
}

void w_puts(Writer *w, const char *s)
{
    while (*s) {
        const char *nl = strchr(s, '\n');
        size_t n = nl ? (size_t)(nl - s + 1) : strlen(s);
        if (w->at_bol && n > (nl ? 1u : 0u))
            for (int i = 0; i < w->indent; i++) w_raw(w, "    ", 4);
        w_raw(w, s, n);
        w->at_bol = nl != NULL;
        s += n;
    }
}

void w_vprintf(Writer *w, const char *fmt, va_list ap)
{
    char small[512];
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n < 0) { va_end(ap2); return; }
    if ((size_t)n < sizeof small) {
        w_puts(w, small);
    } else {
        char *big = malloc((size_t)n + 1);
        if (!big) abort();
        vsnprintf(big, (size_t)n + 1, fmt, ap2);
        w_puts(w, big);
        free(big);
    }
    va_end(ap2);
}

void w_printf(Writer *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    w_vprintf(w, fmt, ap);
    va_end(ap);
}

void w_line(Writer *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    w_vprintf(w, fmt, ap);
    va_end(ap);
    w_puts(w, "\n");
}

int w_save(const Writer *w, const char *path)
{
    size_t pl = strlen(path);
    char *tmp = malloc(pl + 32);
    if (!tmp) return -1;
    snprintf(tmp, pl + 32, "%s.tmp%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) { free(tmp); return -1; }
    size_t n = w->len ? fwrite(w->buf, 1, w->len, f) : 0;
    int bad = n != w->len;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) { remove(tmp); free(tmp); return -1; }
    free(tmp);
    return 0;
}
