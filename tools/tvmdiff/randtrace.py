"""Random schedule traces, drawn against TVM's own schedule state.

A trace is built one step at a time on a live TVM schedule: a step picks a
primitive and arguments that are plausible for the program as it is now
(a block that exists, one of its loops, a buffer index it has, an index map
of the right arity), writes it as the line TVM's Trace.as_python would print,
and runs that line. A step TVM applies is kept and the trace goes on; a step
TVM refuses gives a refusal case (the trace so far and that line), and the
trace goes on without it. The finished trace gives an applied case.

Each case is (script, expected): expected is TVM's module, or None where TVM
refused the last line. Every draw depends only on the seed.
"""
import random
import re

from tvm import s_tir

SCOPES = ["global", "local", "shared"]
DTYPES = ["float16", "float32", "float64", "int32"]
BLOCK = re.compile(r'T\.sblock\("([^"]+)"\)')


class Draw:
    """One random trace on one program."""

    def __init__(self, mod, rng, tvm_script, progress, avoid):
        self.sch = s_tir.Schedule(mod)
        self.progress = progress
        self.avoid = avoid
        self.rng = rng
        self.lines = []
        self.ns = {"sch": self.sch, "T": tvm_script}
        self.k = 0  # outputs so far, numbering b<k>, l<k>, v<k> as TVM does

    # --- bookkeeping --------------------------------------------------------
    def name(self, prefix):
        n = "%s%d" % (prefix, self.k)
        self.k += 1
        return n

    def run(self, line):
        """Runs line in TVM; keeps it when TVM applies it."""
        if self.progress:
            # TVM can crash the process: leave the step being run behind
            with open(self.progress, "w") as f:
                f.write("\n".join(self.lines + [line]))
        exec(line, self.ns)  # noqa: S102
        self.lines.append(line)

    def funcs(self):
        return [gv.name_hint for gv in self.sch.mod.functions]

    def blocks(self, func):
        text = self.sch.mod[func].script()
        return [b for b in BLOCK.findall(text) if b != "root"]

    def block(self, func=None):
        """Looks up a random block; returns its name in the trace."""
        func = func or self.rng.choice(self.funcs())
        names = self.blocks(func)
        if not names:
            return None
        b = self.name("b")
        self.run('%s = sch.get_sblock(name="%s", func_name="%s")' %
                 (b, self.rng.choice(names), func))
        return b

    def loops(self, b):
        """Looks up b's loops; returns their names (none: no line)."""
        n = len(self.sch.get_loops(self.ns[b]))
        if n == 0:
            return []
        names = [self.name("l") for _ in range(n)]
        self.run("%s, = sch.get_loops(block=%s)" % (", ".join(names), b)
                 if n == 1 else "%s = sch.get_loops(block=%s)" % (", ".join(names), b))
        return names

    def get(self, rv):
        return self.sch.get(self.ns[rv])

    def extent(self, loop):
        e = self.get(loop).extent
        return int(e) if hasattr(e, "value") else None

    def pick_buffer(self, b, write=None):
        blk = self.get(b)
        if write is None:
            write = self.rng.random() < 0.5
        regions = blk.writes if write else blk.reads
        if not regions:
            return None
        i = self.rng.randrange(len(regions))
        return write, i, regions[i]

    # --- steps --------------------------------------------------------------
    def factors(self, extent, n):
        """n split factors: mostly dividing, sometimes not, one None."""
        out = []
        for _ in range(n - 1):
            if extent and self.rng.random() < 0.7:
                divs = [d for d in range(1, min(extent, 64) + 1) if extent % d == 0]
                out.append(self.rng.choice(divs))
            else:
                out.append(self.rng.randint(1, 9))
        out.insert(self.rng.randrange(n), None)
        return out

    def perfect_tile(self, extent, n):
        """A decision of sample_perfect_tile: n factors multiplying to extent,
        the innermost at most 16."""
        while True:
            rest, out = extent, []
            for _ in range(n - 1):
                d = self.rng.choice([x for x in range(1, rest + 1) if rest % x == 0])
                out.append(d)
                rest //= d
            out.append(rest)
            self.rng.shuffle(out)
            if out[-1] <= 16:
                return out

    def step(self):
        """One random step; returns the line (applied or not)."""
        r = self.rng
        b = self.block()
        if b is None:
            return None
        ls = self.loops(b)
        kinds = ["split", "split", "fuse", "reorder", "compute_at", "compute_at",
                 "inline", "inline", "cache", "cache", "reindex", "layout",
                 "block_layout", "blockize", "rfactor", "decompose", "for_kind",
                 "annotate", "storage_align", "set_scope", "set_dtype",
                 "read_write_at", "rolling", "pad_einsum", "partition",
                 "epilogue", "iter_order", "unit_loop", "merge", "cache_index",
                 "cache_inplace", "buffer_access", "sampled_split"]
        kind = r.choice(kinds)
        if kind in self.avoid:
            return None
        return getattr(self, "step_" + kind)(b, ls)

    def step_split(self, b, ls):
        if not ls:
            return None
        l = self.rng.choice(ls)
        n = self.rng.choice([2, 2, 3])
        outs = ", ".join(self.name("l") for _ in range(n))
        return ("%s = sch.split(loop=%s, factors=%s, preserve_unit_iters=%s, "
                "disable_predication=False)" %
                (outs, l, self.factors(self.extent(l), n), self.rng.random() < 0.8))

    def step_sampled_split(self, b, ls):
        if not ls:
            return None
        l = self.rng.choice(ls)
        e = self.extent(l)
        if not e or e > 4096:
            return None
        n = self.rng.choice([2, 3, 4])
        vs = [self.name("v") for _ in range(n)]
        self.run("%s = sch.sample_perfect_tile(loop=%s, n=%d, max_innermost_factor=16, "
                 "decision=%s)" % (", ".join(vs), l, n, self.perfect_tile(e, n)))
        outs = ", ".join(self.name("l") for _ in range(n))
        return ("%s = sch.split(loop=%s, factors=[%s], preserve_unit_iters=True, "
                "disable_predication=False)" % (outs, l, ", ".join(vs)))

    def step_fuse(self, b, ls):
        if len(ls) < 2:
            return None
        at = self.rng.randrange(len(ls) - 1)
        n = self.rng.randint(2, len(ls) - at)
        return "%s = sch.fuse(%s, preserve_unit_iters=%s)" % (
            self.name("l"), ", ".join(ls[at:at + n]), self.rng.random() < 0.8)

    def step_reorder(self, b, ls):
        sub = [l for l in ls if self.rng.random() < 0.6]
        if len(sub) < 2:
            return None
        self.rng.shuffle(sub)
        return "sch.reorder(%s)" % ", ".join(sub)

    def step_compute_at(self, b, ls):
        other = self.block()
        ols = self.loops(other) if other else []
        if not ols:
            return None
        method = self.rng.choice(["compute_at", "reverse_compute_at"])
        return "sch.%s(block=%s, loop=%s, preserve_unit_loops=%s, index=-1)" % (
            method, b, self.rng.choice(ols), self.rng.random() < 0.5)

    def step_inline(self, b, ls):
        return "sch.%s(block=%s)" % (
            self.rng.choice(["compute_inline", "reverse_compute_inline"]), b)

    def step_cache(self, b, ls):
        p = self.pick_buffer(b)
        if not p:
            return None
        write, i, _ = p
        kind = "write" if write else "read"
        return "%s = sch.cache_%s(block=%s, %s_buffer_index=%d, storage_scope=\"%s\")" % (
            self.name("b"), kind, b, kind, i, self.rng.choice(SCOPES))

    def used_iters(self, blk, region):
        """Indices of the block iters that region's bounds use."""
        text = " ".join(str(r.min) for r in region.region)
        return [q for q, iv in enumerate(blk.iter_vars)
                if re.search(r"\b%s\b" % re.escape(iv.var.name), text)]

    def step_reindex(self, b, ls):
        p = self.pick_buffer(b)
        if not p:
            return None
        write, i, region = p
        kind = "write" if write else "read"
        if self.rng.random() < 0.5:
            return "%s = sch.reindex(block=%s, buffer=(\"%s\", %d))" % (
                self.name("b"), b, kind, i)
        blk = self.get(b)
        used = self.used_iters(blk, region)
        if not used:
            return None
        if self.rng.random() < 0.3:
            self.rng.shuffle(used)
        params = ", ".join("v%d" % q for q in range(len(blk.iter_vars)))
        body = ", ".join("v%d" % q for q in used)
        return ("%s = sch.reindex_cache_%s(block=%s, %s_buffer_index=%d, storage_scope=\"%s\", "
                "index_map=lambda %s: (%s,))" % (self.name("b"), kind, b, kind, i,
                                                 self.rng.choice(SCOPES), params, body))

    def step_layout(self, b, ls):
        p = self.pick_buffer(b)
        if not p:
            return None
        write, i, region = p
        shape = [int(s) if hasattr(s, "value") else None for s in region.buffer.shape]
        n = len(shape)
        if n == 0:
            return None
        ps = ["a%d" % d for d in range(n)]
        out = list(ps)
        how = self.rng.randrange(3)
        d = self.rng.randrange(n)
        if how == 0 or n == 1:  # split a dimension
            k = self.rng.choice([2, 3, 4, 8, 16])
            out[d:d + 1] = ["%s // %d" % (ps[d], k), "%s %% %d" % (ps[d], k)]
        elif how == 1:  # swap two dimensions
            e = self.rng.randrange(n)
            out[d], out[e] = out[e], out[d]
        else:  # fuse two neighbours
            d = min(d, n - 2)
            if shape[d + 1] is None:
                return None
            out[d:d + 2] = ["%s * %d + %s" % (ps[d], shape[d + 1], ps[d + 1])]
        return ("sch.transform_layout(block=%s, buffer=(\"%s\", %d), index_map=lambda %s: (%s,), "
                "pad_value=None, assume_injective_transform=False)" %
                (b, "write" if write else "read", i, ", ".join(ps), ", ".join(out)))

    def step_block_layout(self, b, ls):
        blk = self.get(b)
        n = len(blk.iter_vars)
        if n < 2:
            return None
        ps = ["v%d" % q for q in range(n)]
        out = list(ps)
        if self.rng.random() < 0.5:
            d = self.rng.randrange(n - 1)
            e = blk.iter_vars[d + 1].dom.extent
            if not hasattr(e, "value"):
                return None
            out[d:d + 2] = ["%s * %d + %s" % (ps[d], int(e), ps[d + 1])]
        else:
            self.rng.shuffle(out)
        return "sch.transform_block_layout(block=%s, index_map=lambda %s: (%s,))" % (
            b, ", ".join(ps), ", ".join(out))

    def step_blockize(self, b, ls):
        if not ls:
            return None
        return "%s = sch.blockize(target=%s, preserve_unit_iters=%s)" % (
            self.name("b"), self.rng.choice(ls), self.rng.random() < 0.8)

    def step_rfactor(self, b, ls):
        if not ls:
            return None
        l = self.rng.choice(ls)
        if self.rng.random() < 0.5:
            outs = [self.name("l") for _ in range(2)]
            self.run("%s = sch.split(loop=%s, factors=%s, preserve_unit_iters=True, "
                     "disable_predication=False)" %
                     (", ".join(outs), l, self.factors(self.extent(l), 2)))
            l = self.rng.choice(outs)
        return "%s = sch.rfactor(loop=%s, factor_axis=%d)" % (
            self.name("b"), l, self.rng.randint(-1, 1))

    def step_decompose(self, b, ls):
        if not ls:
            return None
        return "%s = sch.decompose_reduction(block=%s, loop=%s)" % (
            self.name("b"), b, self.rng.choice(ls))

    def step_for_kind(self, b, ls):
        if not ls:
            return None
        l = self.rng.choice(ls)
        kind = self.rng.choice(["parallel", "vectorize", "unroll", "bind", "bind"])
        if kind == "bind":
            axis = self.rng.choice(["blockIdx.x", "threadIdx.x", "threadIdx.y", "vthread.x"])
            return "sch.bind(loop=%s, thread_axis=\"%s\")" % (l, axis)
        return "sch.%s(loop=%s)" % (kind, l)

    def step_annotate(self, b, ls):
        target = self.rng.choice(ls + [b])
        key, val = self.rng.choice([("pragma_auto_unroll_max_step", "16"),
                                    ("pragma_unroll_explicit", "1"),
                                    ("meta_schedule.tiling_structure", "\"SSRSRS\""),
                                    ("software_pipeline_stage", "[0, 1]")])
        return "sch.annotate(block_or_loop=%s, ann_key=\"%s\", ann_val=%s)" % (target, key, val)

    def step_storage_align(self, b, ls):
        p = self.pick_buffer(b, write=True)
        if not p:
            return None
        ndim = len(p[2].buffer.shape)
        return "sch.storage_align(block=%s, buffer_index=%d, axis=%d, factor=%d, offset=%d)" % (
            b, p[1], self.rng.randint(-1, max(ndim - 1, 0)), self.rng.choice([4, 16, 32, 128]),
            self.rng.randint(0, 8))

    def step_set_scope(self, b, ls):
        p = self.pick_buffer(b, write=True)
        if not p:
            return None
        return "sch.set_scope(block=%s, buffer_index=%d, storage_scope=\"%s\")" % (
            b, p[1], self.rng.choice(SCOPES))

    def step_set_dtype(self, b, ls):
        p = self.pick_buffer(b, write=True)
        if not p:
            return None
        return "sch.unsafe_set_dtype(block=%s, buffer_index=%d, dtype=\"%s\")" % (
            b, p[1], self.rng.choice(DTYPES))

    def step_read_write_at(self, b, ls):
        if not ls:
            return None
        p = self.pick_buffer(b)
        if not p:
            return None
        kind = "write" if p[0] else "read"
        return "%s = sch.%s_at(loop=%s, block=%s, %s_buffer_index=%d, storage_scope=\"%s\")" % (
            self.name("b"), kind, self.rng.choice(ls), b, kind, p[1],
            self.rng.choice(["shared", "local"]))

    def step_rolling(self, b, ls):
        return "sch.rolling_buffer(block=%s, write_buffer_index=0)" % b

    def step_pad_einsum(self, b, ls):
        n = len(self.get(b).iter_vars)
        if not n:
            return None
        pads = [self.rng.choice([1, 1, 4, 8, 16, 32]) for _ in range(n)]
        return "sch.pad_einsum(block=%s, padding=%s)" % (b, pads)

    def step_partition(self, b, ls):
        if not ls:
            return None
        l = self.rng.choice(ls)
        n = self.rng.choice([2, 3])
        outs = ", ".join(self.name("l") for _ in range(n))
        return "%s = sch.loop_partition(loop=%s, factors=%s, preserve_unit_iters=True)" % (
            outs, l, self.factors(self.extent(l), n))

    def step_epilogue(self, b, ls):
        other = self.block()
        if not other:
            return None
        return "sch.fuse_reduction_epilogue(reduction_block=%s, epilogue_block=%s)" % (b, other)

    def step_iter_order(self, b, ls):
        n = len(self.get(b).iter_vars)
        if n < 2:
            return None
        order = list(range(n))
        self.rng.shuffle(order)
        return "sch.reorder_block_iter_var(block=%s, new_order=%s)" % (b, order)

    def step_unit_loop(self, b, ls):
        return "%s = sch.add_unit_loop(block_or_loop=%s)" % (
            self.name("l"), self.rng.choice(ls + [b]))

    def step_merge(self, b, ls):
        # TVM 0.27 crashes merging two loops of one block
        other = self.block()
        if not other or self.get(other).name_hint == self.get(b).name_hint:
            return None
        ols = self.loops(other)
        depth = min(len(ls), len(ols))
        if depth == 0:
            return None
        d = self.rng.randrange(depth)
        return "%s = sch.merge(%s, %s)" % (self.name("l"), ls[d], ols[d])

    def step_cache_index(self, b, ls):
        outs = self.name("b")
        return "%s = sch.cache_index(block=%s, storage_scope=\"global\", cse_thresh=%d)" % (
            outs, b, self.rng.choice([0, 1, 4]))

    def step_cache_inplace(self, b, ls):
        p = self.pick_buffer(b, write=False)
        if not p:
            return None
        return "%s = sch.cache_inplace(block=%s, read_buffer_index=%d, storage_scope=\"%s\")" % (
            self.name("b"), b, p[1], self.rng.choice(SCOPES))

    def step_buffer_access(self, b, ls):
        p = self.pick_buffer(b)
        if not p:
            return None
        write, i, region = p
        blk = self.get(b)
        ps = ["v%d" % q for q in range(len(blk.iter_vars))]
        if not ps:
            return None
        ranges = []
        for r in region.region:
            ranges.append("(%s, %s + %d)" % (str(r.min), str(r.min), self.rng.randint(1, 3)))
        text = ", ".join(ranges)
        for q, iv in enumerate(blk.iter_vars):
            text = re.sub(r"\b%s\b" % re.escape(iv.var.name), ps[q], text)
        if re.search(r"[A-Za-z_]\w*", re.sub(r"\bv\d+\b", "", text)):
            return None  # a bound that names something other than an iter
        return ("sch.annotate_buffer_access(block=%s, buffer_index=%d, buf_type=\"%s\", "
                "gen_new_ranges=lambda %s: [%s])" %
                (b, i, "write" if write else "read", ", ".join(ps), text))


def draw(mod, seed, tvm_script, progress=None, avoid=(), max_steps=6):
    """The cases of one random trace: [(script, outcome, result)], outcome
    "applied" (result: TVM's module), "refused" (a ScheduleError: its
    message) or "failed" (another error of TVM's: its message). progress
    names a file that holds the trace up to the step being run; avoid lists
    steps not to draw."""
    rng = random.Random(seed)
    d = Draw(mod, rng, tvm_script, progress, set(avoid))
    cases = []
    for _ in range(rng.randint(1, max_steps)):
        before = d.sch.mod
        try:
            line = d.step()
        except Exception:  # noqa: BLE001 - a lookup TVM refused: the draw ends
            break
        if line is None:
            continue
        try:
            d.run(line)
        except Exception as e:  # noqa: BLE001 - TVM refuses the step
            msg = str(e).strip().splitlines()
            outcome = "refused" if isinstance(e, s_tir.ScheduleError) else "failed"
            cases.append(("\n".join(d.lines + [line]), outcome,
                          (msg[-1] if msg else repr(e))[:300]))
            # a refused step must leave the schedule as it was
            if not before.same_as(d.sch.mod):
                break
    if any(not re.search(r"sch\.get_(sblock|loops)\(", l) for l in d.lines):
        cases.append(("\n".join(d.lines), "applied", d.sch.mod))
    return cases
