/* writer.h — the one text writer: a growable buffer with an indent level.
 * The printer, the C emitter and every report write through it. */
#ifndef GRAPHC_WRITER_H
#define GRAPHC_WRITER_H

#include <stdarg.h>
#include <stddef.h>

typedef struct Writer {
    char *buf;
    size_t len, cap;
    int indent;      /* in units of 4 spaces, applied by w_line */
    int at_bol;      /* at beginning of line */
} Writer;

void w_init(Writer *w);
void w_free(Writer *w);
/* Appends formatted text; indentation is inserted at the start of each line. */
void w_printf(Writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void w_vprintf(Writer *w, const char *fmt, va_list ap);
void w_puts(Writer *w, const char *s);
/* Appends formatted text plus a newline. */
void w_line(Writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Writes the buffer to path atomically (temp file + rename); 0 or -1. */
int w_save(const Writer *w, const char *path);

#endif
