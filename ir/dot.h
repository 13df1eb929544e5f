/* dot.h — the graph as a Graphviz digraph (`graphc dump --format=dot`). */
#ifndef GRAPHC_DOT_H
#define GRAPHC_DOT_H

#include "ir.h"
#include "writer.h"

/* Writes g as `digraph NAME { ... }`: one box per node, graph inputs and
 * constants as small shapes, edges labelled dtype[shape], and every fused
 * node (a string attribute `expr` or `epilogue`) as a cluster with one box
 * per op of its expression. Same graph, same bytes. */
void ir_print_dot(const Graph *g, Writer *w);

#endif
