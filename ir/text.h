/* text.h — graphc's text IR: printer and parser (format in docs/text-ir.md).
 * print(parse(print(g))) == print(g) for every graph. */
#ifndef GRAPHC_TEXT_H
#define GRAPHC_TEXT_H

#include "ir.h"
#include "writer.h"

/* Prints g. With elide != 0, constants over 64 elements print as
 * `<elided N bytes>` (readable dumps; the parser refuses those). */
void ir_print(const Graph *g, Writer *w, int elide);
/* Parses text (NUL-terminated, `len` bytes); `file` names it in errors
 * ("FILE:LINE:COL: ..."). Returns a new graph or NULL with a diagnostic. */
Graph *ir_parse(const char *text, size_t len, const char *file, Diag *d);
/* Reads and parses a file. */
Graph *ir_parse_file(const char *path, Diag *d);

#endif
