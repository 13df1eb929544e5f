#!/usr/bin/python3
"""layer_profile.py — where the time of a model compiled by graphc goes, node by node, at 1 thread
and at T threads, and what the T threads lose: waiting for each other, or running slower.

    /usr/bin/python3 bench/layer_profile.py [--folder] MODEL.onnx [--threads 2] [--rounds 10] [--runs 20]
                                            [--graphc build/graphc] [--top 15] [--work DIR]

Compiles MODEL (`graphc compile MODEL -o WORK/c --name m`, C target, default options; with
--folder, MODEL is such a folder already generated, perhaps edited by hand, and a copy of it is
taken) and adds a timer around every node's block of `m.c` (the block under each
`/* OP 'NAME': ... */` comment; views have none), then builds it with the generated Makefile's
flags plus a driver written here. The driver wraps the bundled pthread pool
(gc_thread_pool.c) in a GcThreadPool of its own, so that every parallel_for a kernel makes is
timed whole (wall) and task by task on the thread that runs it (busy), without touching the
runtime. The input is a fixed pseudo-random pattern (every float input uniform in [-1, 1)).

--rounds rounds, each of --runs inferences at 1 thread (NAME_run_v) and then --runs at T
threads (NAME_run_v_parallel); inferences of one kind run back to back, so the pool's
workers are awake as they are in bench/cpu_bench.c. The first round is a warm-up and is not
counted. Before timing, the driver checks that the T-thread outputs equal the 1-thread ones bit
for bit (the issue 10 rule) and exits with status 1 if they do not.

Prints per node (the --top slowest at T threads, then the totals over all nodes), times in ms
per inference, means over the counted runs:
  1T          the node at 1 thread
  TT          the node at T threads (wall)
  speedup     1T / TT
  busy        the sum over threads of the time spent inside tasks, divided by 1T: above 1 the
              threads do the same work more slowly than one thread did (caches, memory, data
              written by another core)
  wait        TT minus the busiest thread's busy time: dispatch, joining, serial code around
              the parallel_for calls of the node
  imbalance   the busiest thread's busy time minus the mean over threads (a node that makes no
              parallel_for counts as busy on one thread for its whole TT)
The totals line splits the T-thread time the same way, against the ideal 1T / T.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

DRIVER = r"""
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "m.h"
#include "gc_thread_pool.h"

#define NNODES %(nnodes)d
#define MAXT 64
static const char *const node_label[NNODES + 1] = {%(labels)s 0};

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* [mode][node]: mode 0 = 1 thread, 1 = T threads */
static double node_ms[2][NNODES], busy_ms[2][NNODES][MAXT];
static int mode, counting, cur_node = -1;
static double node_t0;
static __thread int tid = -1;
static int n_tid;

void gcprof_begin(int node) { cur_node = node; node_t0 = now_ms(); }
void gcprof_end(int node)
{
    if (counting) node_ms[mode][node] += now_ms() - node_t0;
    cur_node = -1;
}

typedef struct Wrap { GcTaskFn fn; void *arg; } Wrap;
static GcThreadPool inner;

static void task(void *arg, int64_t t)
{
    const Wrap *w = (const Wrap *)arg;
    double t0, t1;
    if (tid < 0) tid = __atomic_fetch_add(&n_tid, 1, __ATOMIC_SEQ_CST) %% MAXT;
    t0 = now_ms();
    w->fn(w->arg, t);
    t1 = now_ms();
    if (counting && cur_node >= 0) busy_ms[mode][cur_node][tid] += t1 - t0;
}

static void parallel_for(void *ctx, int64_t n, GcTaskFn fn, void *arg)
{
    Wrap w;
    (void)ctx;
    w.fn = fn;
    w.arg = arg;
    inner.parallel_for(inner.ctx, n, task, &w);
}

static void *aligned(size_t n)
{
    void *p = NULL;
    return posix_memalign(&p, 64, n ? n : 64) ? NULL : p;
}

int main(int argc, char **argv)
{
    const int threads = atoi(argv[1]), rounds = atoi(argv[2]), runs = atoi(argv[3]);
    static const size_t in_bytes[] = {%(in_bytes)s}, out_bytes[] = {%(out_bytes)s};
    static const char *const in_dtype[] = {%(in_dtypes)s};
    const void *ins[%(nin)d];
    void *outs[%(nout)d], *outs1[%(nout)d];
    void *arena = aligned(m_ARENA_BYTES);
    unsigned s = 12345u;
    GcPthreadPool *pp;
    GcThreadPool pool;
    int i, r, k, n;
    if (!arena) return 2;
    for (i = 0; i < %(nin)d; i++) {
        unsigned char *b = aligned(in_bytes[i]);
        if (!b) return 2;
        memset(b, 0, in_bytes[i]);
        if (!strcmp(in_dtype[i], "f32"))
            for (k = 0; k < (int)(in_bytes[i] / 4); k++) {
                s = s * 1664525u + 1013904223u;
                ((float *)b)[k] = (float)((s >> 8) & 0xffff) / 32768.0f - 1.0f;
            }
        ins[i] = b;
    }
    for (i = 0; i < %(nout)d; i++)
        if (!(outs[i] = aligned(out_bytes[i])) || !(outs1[i] = aligned(out_bytes[i]))) return 2;
    if (!(pp = gc_pthread_pool_start(threads))) return 2;
    inner = gc_pthread_pool_get(pp);
    pool.n_threads = threads;
    pool.parallel_for = parallel_for;
    pool.ctx = NULL;

    if (m_run_v(NULL, arena, ins, outs1) || m_run_v_parallel(NULL, arena, ins, outs, &pool)) return 2;
    for (i = 0; i < %(nout)d; i++)
        if (memcmp(outs[i], outs1[i], out_bytes[i])) {
            printf("mismatch %%d\n", i);
            return 1;
        }
    for (r = 0; r < rounds; r++) {
        counting = r > 0;
        mode = 0;
        for (k = 0; k < runs; k++) m_run_v(NULL, arena, ins, outs);
        mode = 1;
        for (k = 0; k < runs; k++) m_run_v_parallel(NULL, arena, ins, outs, &pool);
    }
    n = (rounds - 1) * runs;
    for (i = 0; i < NNODES; i++) {
        printf("node %%d\t%%s\t%%.6f\t%%.6f", i, node_label[i], node_ms[0][i] / n, node_ms[1][i] / n);
        for (k = 0; k < threads; k++) printf("\t%%.6f", busy_ms[1][i][k] / n);
        printf("\n");
    }
    gc_pthread_pool_stop(pp);
    return 0;
}
"""


def run(cmd, **kw):
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if p.returncode != 0:
        sys.exit(f"layer_profile: {' '.join(str(c) for c in cmd)} failed ({p.returncode}):\n{p.stdout}{p.stderr}")
    return p


def instrument(src):
    """m.c with gcprof_begin/end around every node block; returns (text, labels)."""
    lines = src.split("\n")
    out, labels, i = [], [], 0
    while i < len(lines):
        m = re.match(r"    /\* (\w+) '((?:[^'\\]|\\.)*)'", lines[i])
        if m and i + 1 < len(lines) and lines[i + 1] == "    {":
            j = i + 2
            while j < len(lines) and lines[j] != "    }":
                j += 1
            if j == len(lines):
                sys.exit("layer_profile: a node block of m.c has no closing brace at its indentation")
            k = len(labels)
            labels.append(f"{m.group(1)} {m.group(2)}")
            out += [lines[i], f"    gcprof_begin({k});", *lines[i + 1:j + 1], f"    gcprof_end({k});"]
            i = j + 1
            continue
        out.append(lines[i])
        i += 1
    text = "\n".join(out)
    decl = "void gcprof_begin(int node);\nvoid gcprof_end(int node);\n"
    pos = text.find("\nstatic ")
    if pos < 0 or not labels:
        sys.exit("layer_profile: no node blocks found in m.c (has the generated code's layout changed?)")
    return text[:pos + 1] + decl + text[pos + 1:], labels


def macros(what, n):
    """m_INPUT_0_BYTES, m_INPUT_1_BYTES, ... for what = 'INPUT_{}_BYTES'."""
    return ", ".join("m_" + what.format(i) for i in range(n))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", help="ONNX model (or graphc text IR), or with --folder a folder graphc generated")
    ap.add_argument("--folder", action="store_true",
                    help="MODEL is the output folder of `graphc compile ... --name m` (perhaps edited by hand): "
                         "profile a copy of it instead of compiling")
    ap.add_argument("--threads", type=int, default=2, help="thread count to compare with 1 (default %(default)s)")
    ap.add_argument("--rounds", type=int, default=10, help="rounds, the first one uncounted (default %(default)s)")
    ap.add_argument("--runs", type=int, default=20, help="inferences per round and thread count (default %(default)s)")
    ap.add_argument("--graphc", default=str(ROOT / "build" / "graphc"), help="path of the graphc binary")
    ap.add_argument("--top", type=int, default=15, help="nodes listed, slowest at T threads first (default %(default)s)")
    ap.add_argument("--work", help="scratch folder (default: a temporary one, removed afterwards)")
    a = ap.parse_args()
    if a.threads < 2 or a.threads > 64 or a.rounds < 2 or a.runs < 1:
        sys.exit("layer_profile: --threads must be 2..64, --rounds >= 2, --runs >= 1")
    work = Path(a.work) if a.work else Path(tempfile.mkdtemp(prefix="layer_profile."))
    try:
        c = work / "c"
        if c.exists():
            shutil.rmtree(c)
        if a.folder:
            shutil.copytree(a.model, c)
        else:
            run([a.graphc, "compile", a.model, "-o", c, "--name", "m"])
        h = (c / "m.h").read_text()
        if "m_HAS_RUN_PARALLEL" not in h:
            sys.exit("layer_profile: the generated header has no parallel entry")
        text, labels = instrument((c / "m.c").read_text())
        (c / "m.c").write_text(text)
        nin = int(re.search(r"#define m_NUM_INPUTS\s+(\d+)", h).group(1))
        nout = int(re.search(r"#define m_NUM_OUTPUTS\s+(\d+)", h).group(1))
        esc = lambda s: '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
        (c / "profile_main.c").write_text(DRIVER % dict(
            nnodes=len(labels), labels="".join(esc(x) + ", " for x in labels), nin=nin, nout=nout,
            in_bytes=macros("INPUT_{}_BYTES", nin), out_bytes=macros("OUTPUT_{}_BYTES", nout),
            in_dtypes=macros("INPUT_{}_DTYPE", nin)))
        env = {k: v for k, v in os.environ.items() if k != "CFLAGS"}
        for stale in ("libm.a", "m.o", "m_weights.o"):
            (c / stale).unlink(missing_ok=True)
        run(["make", "-C", c, "libm.a"], env=env)
        cflags = re.search(r"^CFLAGS \?= (.*)$", (c / "Makefile").read_text(), re.M).group(1).split()
        cc = os.environ.get("CC", "cc")
        run([cc, *cflags, "-march=native", "-I", c, c / "profile_main.c", c / "gc_thread_pool.c", c / "libm.a",
             "-lm", "-lpthread", "-o", c / "profile"])
        p = subprocess.run([c / "profile", str(a.threads), str(a.rounds), str(a.runs)], capture_output=True, text=True)
        if p.returncode == 1:
            sys.exit(f"layer_profile: the {a.threads}-thread outputs differ from the 1-thread ones ({p.stdout.strip()})")
        if p.returncode != 0:
            sys.exit(f"layer_profile: the profile driver failed ({p.returncode}): {p.stderr}")
    finally:
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)

    rows = []
    for line in p.stdout.splitlines():
        f = line.split("\t")
        one, par, busy = float(f[2]), float(f[3]), [float(x) for x in f[4:]]
        if not any(busy):  # no parallel_for: the calling thread ran the node alone
            busy = [par] + [0.0] * (len(busy) - 1)
        top = max(busy)
        rows.append((f[1], one, par, sum(busy), par - top, top - sum(busy) / len(busy)))
    T = a.threads
    print(f"# {a.model}: graphc {a.graphc}, {len(rows)} nodes, 1 vs {T} threads, "
          f"{(a.rounds - 1) * a.runs} counted inferences each; ms per inference")
    print(f"{'node':<58} {'1T':>8} {f'{T}T':>8} {'speedup':>7} {'busy':>6} {'wait':>7} {'imbal':>7}")
    for name, one, par, busy, wait, imb in sorted(rows, key=lambda r: -r[2])[:a.top]:
        print(f"{name[:58]:<58} {one:8.4f} {par:8.4f} {one / par if par else 0:7.2f} "
              f"{busy / one if one else 0:6.2f} {wait:7.4f} {imb:7.4f}")
    one = sum(r[1] for r in rows)
    par = sum(r[2] for r in rows)
    busy = sum(r[3] for r in rows)
    wait = sum(r[4] for r in rows)
    imb = sum(r[5] for r in rows)
    print(f"{'total':<58} {one:8.4f} {par:8.4f} {one / par:7.2f} {busy / one:6.2f} {wait:7.4f} {imb:7.4f}")
    print(f"# {T}-thread time {par:.3f} ms = ideal 1T/{T} {one / T:.3f} + slower threads {(busy - one) / T:.3f} "
          f"+ imbalance {imb:.3f} + wait {wait:.3f} (the outputs at 1 and {T} threads are equal bit for bit)")


if __name__ == "__main__":
    main()
