/* graph.c — building and checking graphs: values, nodes, typed attributes
 * parsed from their text form (MXNet's Init(kwargs)), the verifier and the
 * topological sort (post-order DFS from the outputs, as NNVM's DFSVisit). */
#include "ir.h"
#include "op.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

Graph *ir_graph_new(const char *name)
{
    Arena a = {0};
    Graph *g = arena_alloc(&a, sizeof *g);
    g->arena = a;
    g->name = arena_strdup(&g->arena, name ? name : "model");
    g->opt_level = 2;
    return g;
}

void ir_graph_free(Graph *g)
{
    if (!g) return;
    for (IrResource *r = g->resources; r; r = r->next) r->release(r->ptr, r->len);
    Arena a = g->arena; /* g itself lives in its arena */
    arena_free(&a);
}

void ir_graph_own(Graph *g, void *ptr, size_t len, void (*release)(void *, size_t))
{
    IrResource *r = ir_alloc(g, sizeof *r);
    r->ptr = ptr;
    r->len = len;
    r->release = release;
    r->next = g->resources;
    g->resources = r;
}

void *ir_alloc(Graph *g, size_t n) { return arena_alloc(&g->arena, n); }
char *ir_strdup(Graph *g, const char *s) { return arena_strdup(&g->arena, s); }

/* Grows an arena-backed pointer array (old storage stays in the arena). */
static void push_ptr(Graph *g, void ***arr, int *n, int *cap, void *p)
{
    if (*n == *cap) {
        int nc = *cap ? *cap * 2 : 16;
        void **na = ir_alloc(g, sizeof(void *) * (size_t)nc);
        if (*n) memcpy(na, *arr, sizeof(void *) * (size_t)*n);
        *arr = na;
        *cap = nc;
    }
    (*arr)[(*n)++] = p;
}

static void index_insert(Value **tab, int cap, Value *v)
{
    uint64_t i = ir_hash_str(v->name) & (uint64_t)(cap - 1);
    while (tab[i]) i = (i + 1) & (uint64_t)(cap - 1);
    tab[i] = v;
}

/* Keeps the name index at most half full. */
static void index_add(Graph *g, Value *v)
{
    if (2 * (g->n_values + 1) > g->cap_by_name) {
        int cap = g->cap_by_name ? g->cap_by_name * 2 : 64;
        Value **tab = ir_alloc(g, sizeof(Value *) * (size_t)cap);
        for (int i = 0; i < g->n_values; i++) index_insert(tab, cap, g->values[i]);
        g->by_name = tab;
        g->cap_by_name = cap;
    }
    index_insert(g->by_name, g->cap_by_name, v);
}

Value *ir_find_value(const Graph *g, const char *name)
{
    if (!g->cap_by_name) return NULL;
    uint64_t mask = (uint64_t)(g->cap_by_name - 1);
    for (uint64_t i = ir_hash_str(name) & mask; g->by_name[i]; i = (i + 1) & mask)
        if (strcmp(g->by_name[i]->name, name) == 0) return g->by_name[i];
    return NULL;
}

Value *ir_new_value(Graph *g, const char *name)
{
    char *fresh = NULL;
    if (!name || !*name || ir_find_value(g, name)) {
        const char *base = name && *name ? name : "t";
        fresh = malloc(strlen(base) + 32);
        GC_ASSERT(fresh);
        for (int k = g->n_values;; k++) {
            sprintf(fresh, "%s_%d", base, k);
            if (!ir_find_value(g, fresh)) break;
        }
        name = fresh;
    }
    Value *v = ir_alloc(g, sizeof *v);
    v->name = ir_strdup(g, name);
    v->id = g->n_values;
    v->offset = -1;
    index_add(g, v);
    push_ptr(g, (void ***)&g->values, &g->n_values, &g->cap_values, v);
    free(fresh);
    return v;
}

void ir_sweep_values(Graph *g)
{
    char *keep = calloc((size_t)g->n_values + 1, 1);
    GC_ASSERT(keep);
    for (int i = 0; i < g->n_inputs; i++) keep[g->inputs[i]->id] = 1;
    for (int i = 0; i < g->n_outputs; i++) keep[g->outputs[i]->id] = 1;
    for (int i = 0; i < g->n_nodes; i++) {
        const Node *n = g->nodes[i];
        for (int j = 0; j < n->n_in; j++)
            if (n->in[j]) keep[n->in[j]->id] = 1;
        for (int j = 0; j < n->n_out; j++) keep[n->out[j]->id] = 1;
    }
    int k = 0;
    for (int i = 0; i < g->n_values; i++)
        if (keep[i]) {
            g->values[i]->id = k;
            g->values[k++] = g->values[i];
        }
    free(keep);
    /* rebuild the name index over the survivors */
    g->by_name = NULL;
    g->cap_by_name = 0;
    g->n_values = 0;
    while (g->n_values < k) {
        index_add(g, g->values[g->n_values]);
        g->n_values++;
    }
}

Value *ir_add_input(Graph *g, const char *name, DType t, const Shape *s)
{
    Value *v = ir_new_value(g, name);
    v->kind = VK_INPUT;
    v->dtype = t;
    v->shape = *s;
    v->shape_known = 1;
    push_ptr(g, (void ***)&g->inputs, &g->n_inputs, &g->cap_inputs, v);
    return v;
}

Value *ir_add_const(Graph *g, const char *name, DType t, const Shape *s,
                    const void *data, int copy)
{
    Value *v = ir_new_value(g, name);
    v->kind = VK_CONST;
    v->dtype = t;
    v->shape = *s;
    memset(v->shape.sym, 0, sizeof v->shape.sym); /* constants are static */
    v->shape_known = 1;
    int64_t n = 0;
    GC_ASSERT(ir_shape_numel(s, &n) == 0);
    v->nbytes = (size_t)n * ir_dtype_size(t);
    if (copy) {
        void *p = ir_alloc(g, v->nbytes);
        if (v->nbytes) memcpy(p, data, v->nbytes);
        v->data = p;
    } else {
        v->data = data;
    }
    return v;
}

void ir_bind_input(Graph *g, Value *v, const void *data)
{
    GC_ASSERT(v->kind == VK_INPUT);
    int k = 0;
    for (int i = 0; i < g->n_inputs; i++)
        if (g->inputs[i] != v) g->inputs[k++] = g->inputs[i];
    g->n_inputs = k;
    v->kind = VK_CONST;
    v->nbytes = (size_t)ir_numel(&v->shape) * ir_dtype_size(v->dtype);
    void *p = ir_alloc(g, v->nbytes);
    if (v->nbytes) memcpy(p, data, v->nbytes);
    v->data = p;
}

void ir_make_input(Graph *g, Value *v)
{
    GC_ASSERT(v->kind == VK_CONST || v->kind == VK_STATE);
    v->kind = VK_INPUT;
    push_ptr(g, (void ***)&g->inputs, &g->n_inputs, &g->cap_inputs, v);
}

void ir_make_state(Value *v)
{
    GC_ASSERT(v->kind == VK_CONST);
    v->kind = VK_STATE;
}

Value *ir_add_state(Graph *g, const char *name, DType t, const Shape *s, const void *data)
{
    Value *v = ir_add_const(g, name, t, s, data, data != NULL);
    if (!data) v->data = ir_alloc(g, v->nbytes); /* zeroed */
    v->kind = VK_STATE;
    return v;
}

void ir_add_update(Graph *g, Value *state, Value *value)
{
    GC_ASSERT(state->kind == VK_STATE && value->kind == VK_TEMP && state->dtype == value->dtype &&
              ir_shape_eq(&state->shape, &value->shape));
    if (g->n_updates == g->cap_updates) {
        int cap = g->cap_updates ? 2 * g->cap_updates : 16;
        IrUpdate *u = ir_alloc(g, sizeof *u * (size_t)cap);
        if (g->n_updates) memcpy(u, g->updates, sizeof *u * (size_t)g->n_updates);
        g->updates = u;
        g->cap_updates = cap;
    }
    g->updates[g->n_updates++] = (IrUpdate){state, value};
    value->is_output = 1;
}

const IrUpdate *ir_update_of(const Graph *g, const Value *v)
{
    for (int i = 0; i < g->n_updates; i++)
        if (g->updates[i].value == v) return &g->updates[i];
    return NULL;
}

void ir_add_output(Graph *g, Value *v)
{
    v->is_output = 1;
    push_ptr(g, (void ***)&g->outputs, &g->n_outputs, &g->cap_outputs, v);
}

Node *ir_add_node(Graph *g, OpKind op, const char *name, Value *const *in,
                  int n_in, int n_out, const char *const *out_names)
{
    const OpDesc *d = ir_op(op);
    Node *n = ir_alloc(g, sizeof *n);
    n->op = op;
    n->id = g->n_nodes;
    n->n_in = n_in;
    n->n_out = n_out;
    n->ws_offset = -1;
    n->in = ir_alloc(g, sizeof(Value *) * (size_t)(n_in ? n_in : 1));
    for (int i = 0; i < n_in; i++) n->in[i] = in[i];
    n->out = ir_alloc(g, sizeof(Value *) * (size_t)(n_out ? n_out : 1));
    for (int i = 0; i < n_out; i++) {
        char tmp[256];
        const char *on = out_names ? out_names[i] : NULL;
        if (!on) {
            snprintf(tmp, sizeof tmp, "%s_out%d", name ? name : d->name, i);
            on = tmp;
        }
        Value *v = ir_new_value(g, on);
        v->producer = n;
        v->producer_out = i;
        n->out[i] = v;
    }
    if (name) {
        n->name = ir_strdup(g, name);
    } else {
        n->name = n_out ? n->out[0]->name : ir_strdup(g, d->name);
    }
    n->attrs = ir_alloc(g, sizeof(AttrVal) * (size_t)(d->n_attrs ? d->n_attrs : 1));
    for (int i = 0; i < d->n_attrs; i++)
        if (d->attrs[i].deflt) {
            int rc = ir_set_attr(g, n, d->attrs[i].name, d->attrs[i].deflt, NULL);
            GC_ASSERT(rc == 0 && "bad attribute default in op description");
        }
    push_ptr(g, (void ***)&g->nodes, &g->n_nodes, &g->cap_nodes, n);
    return n;
}

int ir_attr_index(const Node *n, const char *key)
{
    const OpDesc *d = ir_op(n->op);
    for (int i = 0; i < d->n_attrs; i++)
        if (strcmp(d->attrs[i].name, key) == 0) return i;
    return -1;
}

static const char *kind_name(AttrKind k)
{
    static const char *names[] = {"int", "float", "string", "ints", "floats", "tensor"};
    return names[k];
}

/* Splits "[1, 2,3]" / "1,2,3" into numbers; returns count or -1. */
static int parse_num_list(const char *s, int is_float, int64_t *iv, double *fv, int max)
{
    while (isspace((unsigned char)*s)) s++;
    int bracket = *s == '[';
    if (bracket) s++;
    int n = 0;
    for (;;) {
        while (isspace((unsigned char)*s)) s++;
        if (bracket && *s == ']') { s++; break; }
        if (!bracket && !*s) break;
        if (n >= max) return -1;
        char *end;
        errno = 0;
        if (is_float) fv[n] = strtod(s, &end);
        else iv[n] = strtoll(s, &end, 10);
        if (end == s || errno == ERANGE) return -1;
        n++;
        s = end;
        while (isspace((unsigned char)*s)) s++;
        if (*s == ',') { s++; continue; }
        if (bracket && *s == ']') { s++; break; }
        if (!bracket && !*s) break;
        return -1;
    }
    while (isspace((unsigned char)*s)) s++;
    return *s ? -1 : n;
}

int ir_set_attr(Graph *g, Node *n, const char *key, const char *text, Diag *d)
{
    int idx = ir_attr_index(n, key);
    const OpDesc *od = ir_op(n->op);
    if (idx < 0) return diag_node_error(d, n, "unknown attribute '%s'", key);
    const AttrSpec *sp = &od->attrs[idx];
    AttrVal *a = &n->attrs[idx];
    AttrVal nv;
    memset(&nv, 0, sizeof nv);
    nv.set = 1;
    while (isspace((unsigned char)*text)) text++;
    char *end;
    switch (sp->kind) {
    case ATTR_INT: {
        errno = 0;
        long long v = strtoll(text, &end, 10);
        while (isspace((unsigned char)*end)) end++;
        if (end == text || *end || errno == ERANGE) goto bad;
        nv.i = v;
        break;
    }
    case ATTR_FLOAT: {
        nv.f = strtod(text, &end);
        while (isspace((unsigned char)*end)) end++;
        if (end == text || *end) goto bad;
        break;
    }
    case ATTR_STRING: {
        size_t len = strlen(text);
        while (len && isspace((unsigned char)text[len - 1])) len--;
        if (len >= 2 && text[0] == '"' && text[len - 1] == '"') nv.s = arena_strndup(&g->arena, text + 1, len - 2);
        else nv.s = arena_strndup(&g->arena, text, len);
        break;
    }
    case ATTR_INTS:
    case ATTR_FLOATS: {
        int isf = sp->kind == ATTR_FLOATS;
        int max = (int)strlen(text) / 2 + 2;
        if (isf) nv.floats = ir_alloc(g, sizeof(double) * (size_t)max);
        else nv.ints = ir_alloc(g, sizeof(int64_t) * (size_t)max);
        int cnt = parse_num_list(text, isf, nv.ints, nv.floats, max);
        if (cnt < 0) goto bad;
        nv.n = cnt;
        break;
    }
    case ATTR_TENSOR:
        return diag_node_error(d, n, "attribute '%s': tensor attributes cannot be given as text here", key);
    }
    *a = nv;
    return 0;
bad:
    return diag_node_error(d, n, "attribute '%s' expects %s, got '%s'", key, kind_name(sp->kind), text);
}

int ir_set_attrs(Graph *g, Node *n, const char *kvs, Diag *d)
{
    const char *s = kvs ? kvs : "";
    char key[128];
    while (*s) {
        while (*s == ';' || isspace((unsigned char)*s)) s++;
        if (!*s) break;
        const char *eq = strchr(s, '=');
        if (!eq) return diag_node_error(d, n, "attribute text '%s' is not key=value", s);
        size_t kl = (size_t)(eq - s);
        while (kl && isspace((unsigned char)s[kl - 1])) kl--;
        if (kl == 0 || kl >= sizeof key) return diag_node_error(d, n, "bad attribute key in '%s'", s);
        memcpy(key, s, kl);
        key[kl] = 0;
        const char *v = eq + 1;
        while (isspace((unsigned char)*v)) v++;
        /* the value ends at ';', or at whitespace outside brackets/quotes */
        const char *e = v;
        int depth = 0, quote = 0;
        while (*e) {
            if (quote) { if (*e == '"') quote = 0; }
            else if (*e == '"') quote = 1;
            else if (*e == '[') depth++;
            else if (*e == ']') depth--;
            else if (*e == ';' || (depth == 0 && isspace((unsigned char)*e))) break;
            e++;
        }
        char *val = malloc((size_t)(e - v) + 1);
        GC_ASSERT(val);
        memcpy(val, v, (size_t)(e - v));
        val[e - v] = 0;
        int rc = ir_set_attr(g, n, key, val, d);
        free(val);
        if (rc) return rc;
        s = e;
    }
    return 0;
}

int ir_value_uses(const Graph *g, const Value *v)
{
    int k = 0;
    for (int i = 0; i < g->n_nodes; i++)
        for (int j = 0; j < g->nodes[i]->n_in; j++)
            if (g->nodes[i]->in[j] == v) k++;
    return k;
}

/* Updates: a state written once, by a value a node produces, after every
 * node that reads the state's old contents (the writer itself may read it:
 * optimizer ops read each element before writing it). */
static int verify_updates(const Graph *g, Diag *d)
{
    if (!g->n_updates) return 0;
    int *pos = malloc(sizeof(int) * (size_t)(g->n_values + 1));
    GC_ASSERT(pos);
    for (int i = 0; i < g->n_values; i++) pos[i] = -1;
    for (int i = 0; i < g->n_nodes; i++) /* last reader of each value */
        for (int j = 0; j < g->nodes[i]->n_in; j++)
            if (g->nodes[i]->in[j]) pos[g->nodes[i]->in[j]->id] = i;
    int rc = 0;
    for (int k = 0; k < g->n_updates && !rc; k++) {
        const IrUpdate *u = &g->updates[k];
        const Node *p = u->value->producer;
        if (u->state->kind != VK_STATE || !p)
            rc = diag_error(d, "update of '%s' by '%s': needs a state value and a node's output", u->state->name,
                            u->value->name);
        for (int i = 0; i < k && !rc; i++)
            if (g->updates[i].state == u->state) rc = diag_error(d, "state '%s' is updated twice", u->state->name);
        int at = -1;
        for (int i = 0; p && i < g->n_nodes; i++)
            if (g->nodes[i] == p) at = i;
        if (!rc && pos[u->state->id] > at)
            rc = diag_node_error(d, g->nodes[pos[u->state->id]], "reads state '%s' after its update by '%s'",
                                 u->state->name, u->value->name);
    }
    free(pos);
    return rc;
}

int ir_verify(const Graph *g, Diag *d)
{
    char *seen = calloc((size_t)g->n_values + 1, 1);
    GC_ASSERT(seen);
    int rc = 0;
    for (int i = 0; i < g->n_values; i++) {
        const Value *v = g->values[i];
        GC_ASSERT(v->id == i);
        if (v->kind != VK_TEMP) seen[i] = 1;
    }
    for (int i = 0; i < g->n_nodes && !rc; i++) {
        const Node *n = g->nodes[i];
        const OpDesc *od = ir_op(n->op);
        if (n->n_in < od->min_in || (od->max_in >= 0 && n->n_in > od->max_in)) {
            rc = diag_node_error(d, n, "expects %d..%d inputs, got %d", od->min_in, od->max_in, n->n_in);
            break;
        }
        if (n->n_out < od->min_out || (od->max_out >= 0 && n->n_out > od->max_out)) {
            rc = diag_node_error(d, n, "expects %d..%d outputs, got %d", od->min_out, od->max_out, n->n_out);
            break;
        }
        for (int j = 0; j < n->n_in; j++) {
            const Value *v = n->in[j];
            if (!v) {
                if (j < od->min_in)
                    rc = diag_node_error(d, n, "required input %d ('%s') is missing", j,
                                         od->in_names ? od->in_names[od->max_in < 0 ? 0 : j] : "?");
                continue;
            }
            if (!seen[v->id]) {
                rc = diag_node_error(d, n, "input '%s' is not defined before use (undefined value or cycle)", v->name);
                break;
            }
        }
        for (int j = 0; j < n->n_out && !rc; j++) {
            const Value *v = n->out[j];
            if (seen[v->id]) rc = diag_node_error(d, n, "output '%s' is defined twice", v->name);
            if (v->producer != n || v->producer_out != j) rc = diag_node_error(d, n, "output '%s' has a wrong producer link", v->name);
            seen[v->id] = 1;
        }
        for (int j = 0; j < od->n_attrs && !rc; j++)
            if (od->attrs[j].required && !n->attrs[j].set)
                rc = diag_node_error(d, n, "required attribute '%s' is missing", od->attrs[j].name);
    }
    for (int i = 0; i < g->n_outputs && !rc; i++)
        if (!seen[g->outputs[i]->id]) rc = diag_error(d, "graph output '%s' is never defined", g->outputs[i]->name);
    if (!rc) rc = verify_updates(g, d);
    free(seen);
    return rc;
}

/* Post-order DFS from the outputs with an explicit stack; a node met again
 * while on the stack is a cycle. */
int ir_toposort(Graph *g, Diag *d)
{
    int nv = g->n_values, nn = g->n_nodes;
    char *state = calloc((size_t)nn + 1, 1); /* 0 new, 1 on stack, 2 done */
    Node **order = malloc(sizeof(Node *) * (size_t)(nn + 1));
    Node **stk = malloc(sizeof(Node *) * (size_t)(nn + 1));
    int *pos = malloc(sizeof(int) * (size_t)(nn + 1));
    GC_ASSERT(state && order && stk && pos);
    (void)nv;
    for (int i = 0; i < nn; i++) g->nodes[i]->id = i;
    int no = 0, rc = 0;
    for (int oi = 0; oi < g->n_outputs + g->n_updates && !rc; oi++) {
        Node *root = oi < g->n_outputs ? g->outputs[oi]->producer : g->updates[oi - g->n_outputs].value->producer;
        if (!root || state[root->id] == 2) continue;
        int sp = 0;
        stk[sp] = root; pos[sp] = 0; sp++;
        state[root->id] = 1;
        while (sp > 0 && !rc) {
            Node *n = stk[sp - 1];
            if (pos[sp - 1] < n->n_in) {
                Value *v = n->in[pos[sp - 1]++];
                Node *p = v ? v->producer : NULL;
                if (!p || state[p->id] == 2) continue;
                if (state[p->id] == 1) {
                    rc = diag_node_error(d, p, "graph has a cycle through value '%s'", v->name);
                    break;
                }
                state[p->id] = 1;
                stk[sp] = p; pos[sp] = 0; sp++;
            } else {
                state[n->id] = 2;
                order[no++] = n;
                sp--;
            }
        }
    }
    if (!rc) {
        if (no) memcpy(g->nodes, order, sizeof(Node *) * (size_t)no);
        g->n_nodes = no;
        for (int i = 0; i < no; i++) g->nodes[i]->id = i;
    }
    free(state); free(order); free(stk); free(pos);
    return rc;
}

int ir_const_ints(const Value *v, int64_t *out, int max)
{
    if (!v || v->kind != VK_CONST || !ir_dtype_is_int(v->dtype)) return -1;
    int64_t n = ir_numel(&v->shape);
    if (n > max) return -1;
    for (int64_t i = 0; i < n; i++) {
        if (v->dtype == DT_I64) memcpy(&out[i], (const char *)v->data + 8 * i, 8);
        else if (v->dtype == DT_U64 && ir_load_f64(DT_U64, v->data, (size_t)i) >= 9223372036854775808.0)
            out[i] = INT64_MAX; /* saturates instead of overflowing the conversion */
        else out[i] = (int64_t)ir_load_f64(v->dtype, v->data, (size_t)i);
    }
    return (int)n;
}

void ir_set_out(Node *n, int i, DType t, const Shape *s)
{
    GC_ASSERT(i < n->n_out);
    n->out[i]->dtype = t;
    n->out[i]->shape = *s;
    /* symbols are set after infer by the op's runtime-shape rule
     * (ir_infer_node), which also turns IR_SYM_NEW into data symbols */
    for (int k = 0; k < IR_MAX_RANK; k++)
        n->out[i]->shape.sym[k] = k < s->rank && s->sym[k] == IR_SYM_NEW ? IR_SYM_NEW : 0;
    n->out[i]->numel_cap = 0;
    n->out[i]->shape_val = NULL;
    n->out[i]->n_shape_val = 0;
    n->out[i]->shape_known = 1;
}
