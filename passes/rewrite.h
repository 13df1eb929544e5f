/* rewrite.h — small graph-editing helpers shared by the rewriting passes
 * (simplify, fold-batchnorm, fuse-layernorm, fusion).
 *
 * The rewriting passes edit edges in place and leave nodes whose outputs
 * nobody reads any more in the schedule; rw_remove_dead() sweeps them at the
 * end. Two rules hold throughout:
 * - graph outputs keep their Value (so their names, which the compiled API
 *   exposes, never change): rw_forward() moves a graph output's name onto the
 *   replacement's producer instead of dropping it, or refuses;
 * - g->nodes stays in topological order: a replacement must be defined before
 *   the value it replaces, and a new node takes the place of the node it
 *   replaces (rw_replace_node).
 */
#ifndef GRAPHC_REWRITE_H
#define GRAPHC_REWRITE_H

#include "../ir/ir.h"

/* Every node input that reads `old` reads `nv` instead (graph outputs are
 * left alone). */
void rw_replace_uses(Graph *g, Value *old, Value *nv);

/* Makes `v` (same dtype and shape, defined before old's producer) stand for
 * `old`, so that old's producer can die. When old is not a graph output, its
 * readers read v. When it is, v must be a node output that is not a graph
 * output itself: v's producer then produces `old` (the name stays) and old's
 * former producer is left producing v, which nobody reads. Returns 1 when
 * done, 0 when impossible (old is a graph output and v a graph input, a
 * constant or a graph output): then only old's readers move to v, and the
 * caller keeps the node for the graph output. */
int rw_forward(Graph *g, Value *old, Value *v);

/* The renaming half of rw_forward: v's producer (before old's) produces
 * `old` instead, v's readers read `old`, and old's former producer produces
 * `v` (unread, so it dies). Both must be node outputs, v not a graph
 * output; the caller makes sure `old` then holds what v held. */
void rw_swap_producers(Graph *g, Value *old, Value *v);

/* A new node of kind op with inputs in[0..n_in) that takes over old's outputs
 * (the same Values, so readers and names are unchanged) and old's place and
 * name in the schedule; old leaves g->nodes. Attributes start at their
 * defaults: the caller sets them, then calls rw_check_node. */
Node *rw_replace_node(Graph *g, Node *old, OpKind op, Value *const *in, int n_in);

/* a and b have the same dtype and shape. */
int rw_same_type(const Value *a, const Value *b);

/* Asserts that n's shape inference reproduces its outputs' dtypes and
 * shapes (after a rewrite changed its inputs or attributes). */
void rw_check_node(Node *n);

/* How many node inputs read each value, indexed by Value.id, taken at one
 * moment: values created later are not counted, and rewrites that follow
 * may make the counts stale (the passes only lower counts, so a stale
 * count errs on the safe side). */
typedef struct RwUses {
    int *n;
    int cap; /* g->n_values when taken */
} RwUses;
void rw_uses_take(const Graph *g, RwUses *u);
void rw_uses_free(RwUses *u);
/* v's reader count; INT32_MAX for a value created after the count. */
int rw_uses(const RwUses *u, const Value *v);
/* 1 when v is read by exactly one node input and is not a graph output. */
int rw_single_use(const RwUses *u, const Value *v);

/* Renumbers g's value ids (i for g->values[i]) and takes u: the start of
 * every pass that counts uses. */
void rw_uses_fresh(Graph *g, RwUses *u);

/* The loop of a pass that rewrites around one op: with fresh use counts,
 * calls fn on every scheduled node of op `op` in order, then, when any call
 * returned nonzero (something was rewritten), rw_remove_dead. Returns the
 * number of rewrites. */
int rw_rewrite_each(Graph *g, OpKind op, int (*fn)(Graph *g, Node *n, const RwUses *u));

/* Drops from the schedule every node none of whose outputs is read or is a
 * graph output (repeatedly, in one backward sweep), then sweeps unused
 * values. Returns the number of nodes removed. */
int rw_remove_dead(Graph *g);

/* Whether every element of constant v equals x. */
int rw_const_all(const Value *v, double x);

/* Whether two attribute values of the same schema kind are equal (lists,
 * strings and tensors compared by content). */
int rw_attr_eq(AttrKind k, const AttrVal *a, const AttrVal *b);

/* Whether two constants hold the same dtype, shape and bytes. */
int rw_const_eq(const Value *a, const Value *b);

#endif
