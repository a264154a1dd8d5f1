#!/usr/bin/python3
"""Writes the TOSA 1.0 flatbuffer test files (.tosa) of qfold-tosa and their manifest.

    make_files.py [OUTDIR]            write OUTDIR/*.tosa and manifest.json (default: files/
                                      next to this script)
    make_files.py --expected OUTDIR   write OUTDIR/<file>.expected for every executed good file:
                                      what tests/tosa/make_modules.py's model says its main
                                      block prints (run_model.py's format)

The good files are the sites of tests/tosa/make_modules.py, the same site definitions that make
the MLIR modules of tests/tosa/modules/ (imported, not copied), laid out as ExecuTorch's Arm
backend writes a graph: one region and one block, both "main", version 1.0.0 not draft, the
graph input first, then per operator its constant operands, each a CONST operator with no
inputs whose output tensor holds the little-endian bytes (shapes: CONST_SHAPE, type SHAPE, int64
values), every operator with its attribute table (empty ones included) and an OpLocation naming
its output. Tensor names are the module's SSA names without '%': a site's tensors all start with
"<site>_" (a report site belongs to site S when a node name contains "S_").

  <module>.tosa                  a whole module of make_modules.py (dyt_alpha, dyt_affine,
                                 rescale_pairs, chains, table_chains, refusals, unsigned,
                                 dyt_blocks)
  <module>.<site>.tosa           one site alone (every site of those modules but dyt_blocks')
  *.model_folded.tosa            the DyT modules and sites folded by make_modules.py's model
                                 (docs/folds.md's rewrites): what a fold must print the same as
  params.n9.tosa                 an INEXACT_ROUND RESCALE pair (refused; not executed: the
                                 spec allows several results)
  variant.*.tosa                 dyt_alpha.a0 written otherwise: as the early 1.0 schema wrote
                                 it (no locations, no empty attribute tables), as a 1.1 draft
                                 file, with an operator TOSA 1.0 does not have
  bad.*.tosa                     files that break the format or the specification, each one
                                 thing wrong with a good file (the manifest's line says what,
                                 and what qfold must answer)

The manifest holds, per good file, the expectations of make_modules.py (the DyT passes' entry
and one entry per newer pass, as in tests/tosa/modules/manifest.json, computed on the file's
own graph: a site alone has the same expectations as in its module, checked here), and per bad
file one line: what is wrong, whether flatc's verifier rejects it, the rule (`check`, the code
tosa_fb.check() raises) and the names qfold's message must contain.

Deterministic; standard library, flatbuffers and the code flatc generates (at run time).
"""

import copy
import json
import os
import struct
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tosa_fb as fb  # noqa: E402

mm = fb.mm
HERE = os.path.dirname(os.path.abspath(__file__))

# --- make_modules.py's modules as graphs -------------------------------------------------------

KIND_OP = {"rescale": "RESCALE", "mul": "MUL", "add": "ADD", "sub": "SUB", "clamp": "CLAMP",
           "table": "TABLE", "cast": "CAST", "reshape": "RESHAPE", "conv2d": "CONV2D",
           "depthwise_conv2d": "DEPTHWISE_CONV2D", "matmul": "MATMUL"}


def tname(v):
    return v.name[1:]


def attribute(v, op):
    """The attribute table of a node, every field given (as read back)."""
    g = fb.gen()
    if op == "RESCALE":
        a = v.attrs
        return {"scale32": a["scale32"], "rounding_mode": g.ROUNDING[a["rounding"]],
                "per_channel": a["per_channel"], "input_unsigned": a["input_unsigned"],
                "output_unsigned": a["output_unsigned"]}
    if op == "CLAMP":
        t = g.DTYPE[fb.FB_TYPE[v.ins[0].dt]]
        return {"min_val": fb.encode(t, [v.bounds[0]]), "max_val": fb.encode(t, [v.bounds[1]]),
                "nan_mode": g.NAN["PROPAGATE"]}
    if op in ("CONV2D", "DEPTHWISE_CONV2D"):
        return {"pad": list(v.conv["pad"]), "stride": [1, 1], "dilation": [1, 1],
                "local_bound": False, "acc_type": g.DTYPE["INT32"]}
    return {}


def graph_of(m):
    """The graph of a make_modules Module (or a site of one): tensors and operators in the
    module's order, run-time parameters (arguments of @f) as further graph inputs."""
    g = fb.gen()
    tensors, ops, inputs = [], [], []
    args = {a.name for a in getattr(m, "args", [])}

    def ttype(v):
        return g.DTYPE[fb.FB_TYPE[v.dt]]

    def add_op(op, attr, ins, out):
        # the union member of op v is number v in TOSA 1.0 (RescaleAttribute = 66 = RESCALE, ...)
        ops.append(fb.Operator(g.OP[op], g.OP[op], attr, ins, [out], out))

    for v in [m.x] + [a for a in m.args if a.name in args] + m.nodes[1:]:
        n = tname(v)
        if v.kind in ("input", "arg"):
            tensors.append(fb.Tensor(n, list(v.shape), ttype(v)))
            inputs.append(n)
        elif v.kind == "const":
            t = ttype(v)
            tensors.append(fb.Tensor(n, list(v.shape), t, fb.encode(t, v.t.data)))
            add_op("CONST", {}, [], n)
        elif v.kind == "const_shape":
            t = g.DTYPE["SHAPE"]
            tensors.append(fb.Tensor(n, [len(v.t.data)], t, fb.encode(t, v.t.data)))
            add_op("CONST_SHAPE", {}, [], n)
        else:
            op = KIND_OP[v.kind]
            tensors.append(fb.Tensor(n, list(v.shape), ttype(v)))
            add_op(op, attribute(v, op), [tname(i) for i in v.ins] +
                   [tname(p) for _, p in v.params], n)
    block = fb.Block("main", ops, tensors, inputs, [tname(o) for o in m.outputs])
    return fb.Graph([1, 0, 0, False], [fb.Region("main", [block])])


def site_module(m, site):
    """Module m reduced to one site: its nodes (named "<site>_..."), outputs and arguments."""
    pre = "%" + site["site"] + "_"
    sub = mm.Module.__new__(mm.Module)
    sub.__dict__.update(m.__dict__)
    sub.name = m.name + "." + site["site"]
    sub.nodes = [m.x] + [v for v in m.nodes if v.name.startswith(pre)]
    sub.outputs = [v for v in m.outputs if v.name.startswith(pre)]
    sub.args = [a for a in m.args if a.name.startswith(pre)]
    sub.sites = [site]
    sub.lines, sub.entries, sub.tamper = [], [], None
    known = {v.name for v in sub.nodes} | {a.name for a in sub.args}
    for v in sub.nodes[1:]:
        for i in v.ins + [p for _, p in v.params]:
            assert i.name in known, (sub.name, v.name, i.name)
    assert sub.outputs, sub.name
    return sub


def entries(m, file):
    """make_modules.py's manifest entries of module m (main()'s, on m's own graph)."""
    if not m.executed:
        e = mm.all_passes_entry(m)
        out = [e]
    else:
        unchanged = all(not any(x["folded"] for x in s["expect"]) for s in m.sites)
        out = [{"id": m.name, "passes": m.passes, "unchanged": unchanged,
                "sites": copy.deepcopy(m.sites)}]
        out += mm.new_pass_entries(m)
    for e in out:
        e.pop("module", None)
        e.pop("expected", None)
        e.pop("executed", None)
        e["id"] = file[:-len(".tosa")] + e["id"][len(m.name):]
    return out


def expectations(es):
    """{(pass set, site): expect} of a list of entries."""
    out = {}
    for e in es:
        key = tuple(e["passes"])
        for s in e["sites"]:
            out[(key, s["site"])] = s["expect"]
    return out


# --- the good files ----------------------------------------------------------------------------

EXECUTED = ("dyt_alpha", "dyt_affine", "rescale_pairs", "chains", "table_chains", "refusals",
            "unsigned")


class Files:
    def __init__(self):
        self.data = {}       # file name -> bytes
        self.good = []       # manifest entries
        self.bad = []
        self.expected = {}   # file name -> the model's output text
        self.graphs = {}     # file name -> Graph (the bases of the bad files)

    def add_good(self, file, graph, entry, expected=None):
        assert file not in self.data, file
        self.data[file] = fb.write(graph)
        self.graphs[file] = graph
        self.good.append(dict({"file": file}, **entry))
        if expected is not None:
            self.expected[file] = expected

    def add_bad(self, file, base, wrong, check, names, verifier="passes", data=None, graph=None):
        file = "bad." + file + ".tosa"
        assert file not in self.data, file
        self.data[file] = data if data is not None else fb.write(graph)
        self.bad.append({"file": file, "base": base, "wrong": wrong, "verifier": verifier,
                         "check": check, "exit": 1, "names": names})


def good_files(f):
    modules = {"dyt_alpha": mm.module_dyt_alpha(), "dyt_affine": mm.module_dyt_affine(),
               "rescale_pairs": mm.module_rescale_pairs(), "chains": mm.module_chains(),
               "table_chains": mm.module_table_chains(), "refusals": mm.module_refusals(),
               "unsigned": mm.module_unsigned(), "dyt_blocks": mm.module_blocks(mm.BLOCKS)}
    folded = {"dyt_alpha": mm.module_dyt_alpha(True), "dyt_affine": mm.module_dyt_affine(True),
              "dyt_blocks": mm.module_blocks(mm.BLOCKS, fold=True)}
    for name, m in modules.items():
        file = name + ".tosa"
        es = entries(m, file)
        entry = {"source": "module " + name, "executed": True, "entries": es}
        if name in folded:
            entry["model_folded"] = name + ".model_folded.tosa"
        if m.tamper:
            # one table entry some input code reaches: changed, the output must differ
            entry["tamper"] = {"tensor": m.tamper["value"][1:], "index": m.tamper["index"]}
        f.add_good(file, graph_of(m), entry, m.expected())
        if name in folded:
            fm = folded[name]
            assert fm.expected() == m.expected()
            f.add_good(name + ".model_folded.tosa", graph_of(fm),
                       {"source": "module %s folded by make_modules.py's model" % name,
                        "executed": True, "model_folded_of": file}, fm.expected())
        if name == "dyt_blocks":
            continue
        whole = expectations(es)
        for site in m.sites:
            sub = site_module(m, site)
            sfile = sub.name + ".tosa"
            ses = entries(sub, sfile)
            for key, exp in expectations(ses).items():
                assert whole[key] == exp, (sfile, key, exp, whole[key])
            for (passes, sid), exp in whole.items():
                if sid == site["site"] and (passes, sid) not in expectations(ses):
                    assert exp == [], (sfile, passes, exp)
            sentry = {"source": "module %s, site %s" % (name, site["site"]), "executed": True,
                      "entries": ses}
            fsub = None
            if name in folded and any(e.get("folded") for e in site["expect"]):
                fsub = site_module(folded[name], site)
                sentry["model_folded"] = sub.name + ".model_folded.tosa"
            f.add_good(sfile, graph_of(sub), sentry, sub.expected())
            if fsub is not None:
                assert fsub.expected() == sub.expected()
                f.add_good(sub.name + ".model_folded.tosa", graph_of(fsub),
                           {"source": "module %s, site %s, folded by make_modules.py's model"
                            % (name, site["site"]), "executed": True,
                            "model_folded_of": sfile}, fsub.expected())
    return modules


# --- variants of dyt_alpha.a0 ------------------------------------------------------------------

def variants(f):
    g = fb.gen()
    base = f.graphs["dyt_alpha.a0.tosa"]
    entry = next(e for e in f.good if e["file"] == "dyt_alpha.a0.tosa")
    expected = f.expected["dyt_alpha.a0.tosa"]

    def like(file, graph, note):
        f.add_good(file, graph, {"source": "dyt_alpha.a0.tosa, " + note, "executed": True,
                                 "entries": relabel(entry["entries"], file)}, expected)

    # as the early 1.0 schema (and Vela's copy of it) writes: no OpLocation, attribute tables
    # only where they have fields
    bare = copy.deepcopy(base)
    for o in bare.main.operators:
        o.has_location, o.location = False, None
        if not o.attr:
            o.attr_type, o.attr = 0, None
    like("variant.bare.tosa", bare, "without locations and without empty attribute tables")
    # a TOSA 1.1 draft file: the version is kept as it is
    v11 = copy.deepcopy(base)
    v11.version = [1, 1, 0, True]
    like("variant.v1_1_draft.tosa", v11, "as a TOSA 1.1 draft file (version 1.1.0, draft)")
    # an operator TOSA 1.0 does not have (76, 1.1's first new one), on a branch of its own
    other = copy.deepcopy(v11)
    blk = other.main
    blk.tensors.append(fb.Tensor("a0_other", [1, 256, 4], g.DTYPE["INT8"]))
    blk.operators.append(fb.Operator(fb.LAST_OP + 1, 0, None, ["x"], ["a0_other"], "a0_other"))
    like("variant.unknown_op.tosa", other, "1.1 draft, plus an operator numbered 76 (not a "
         "TOSA 1.0 op; kept as `other`) reading the input, its result read by nothing")


def relabel(es, file):
    out = copy.deepcopy(es)
    for e in out:
        e["id"] = file[:-len(".tosa")] + e["id"][e["id"].index(".a0") + len(".a0"):]
    return out


# --- the bad files -----------------------------------------------------------------------------

def tensor(graph, name):
    return next(t for t in graph.main.tensors if t.name == name)


def op_of(graph, out):
    return next(o for o in graph.main.operators if out in (o.outputs or []))


def bad_files(f, modules):
    g = fb.gen()
    D = g.DTYPE
    A = "dyt_alpha.a0.tosa"
    a0 = f.graphs[A]
    raw = f.data[A]

    def mutate(base, fn):
        gr = copy.deepcopy(f.graphs[base])
        fn(gr)
        return gr

    def bad(file, base, wrong, check, names, fn=None, **kw):
        f.add_bad(file, base, wrong, check, names,
                  graph=mutate(base, fn) if fn is not None else None, **kw)

    # the format: the flatbuffers verifier (or the header) rejects these
    V = "fails"
    f.add_bad("empty", A, "an empty file", "truncated", [], V, data=b"")
    f.add_bad("short", A, "6 bytes: no room for a root offset and an identifier", "truncated", [],
              V, data=raw[:6])
    f.add_bad("identifier", A, "file identifier TOSB instead of TOSA", "identifier", [], V,
              data=raw[:4] + b"TOSB" + raw[8:])
    f.add_bad("no_identifier", A, "written without a file identifier", "identifier", [], V,
              graph=mutate(A, lambda gr: setattr(gr, "identifier", None)))
    f.add_bad("truncated_half", A, "the first half of a good file", "unreadable", [], V,
              data=raw[:len(raw) // 2])
    f.add_bad("truncated_tail", A, "a good file without its last 8 bytes", "unreadable", [], V,
              data=raw[:-8])
    f.add_bad("root_offset", A, "the root offset points past the end of the file", "unreadable",
              [], V, data=struct.pack("<I", len(raw) + 64) + raw[4:])
    # the length of tensor a0_tanh_lut's data vector, made larger than the file
    at = raw.index(tensor(a0, "a0_tanh_lut").data)
    assert raw[at - 4:at] == struct.pack("<I", 256)
    f.add_bad("vector_length", A, "the length of tensor a0_tanh_lut's data vector is 2^31 - 1, "
              "past the end of the file", "unreadable", [], V,
              data=raw[:at - 4] + struct.pack("<I", 0x7FFFFFFF) + raw[at:])
    name = b"a0_tanh_lut\x00"
    at = raw.index(name)
    f.add_bad("string_terminator", A, "tensor name a0_tanh_lut without its terminating zero byte",
              "unreadable", [], V,
              data=raw[:at + len(name) - 1] + b"X" + raw[at + len(name):])
    f.add_bad("version_missing", A, "no version table (the schema's only required field)",
              "version", [], V, graph=mutate(A, lambda gr: setattr(gr, "version", None)))
    # the root table's vtable offset made to point before the start of the file
    root = struct.unpack_from("<I", raw, 0)[0]
    f.add_bad("vtable_offset", A, "the root table's vtable offset points outside the file",
              "unreadable", [], V,
              data=raw[:root] + struct.pack("<i", root + 4096) + raw[root + 4:])

    # the format's conventions and TOSA's structure: readable, but wrong
    bad("version_0_80", A, "version 0.80.0 (Vela 5.1.0: Tosa version mismatch)", "version",
        ["0.80"], lambda gr: setattr(gr, "version", [0, 80, 0, False]))
    bad("version_2_0", A, "version 2.0.0", "version", ["2.0"],
        lambda gr: setattr(gr, "version", [2, 0, 0, False]))
    bad("version_default", A, "a version table with no fields (reads -1.-1.-1, draft)",
        "version", ["-1.-1"], lambda gr: setattr(gr, "version", [-1, -1, -1, True]))
    bad("no_regions", A, "no regions vector", "regions", [],
        lambda gr: setattr(gr, "regions", None))
    bad("two_regions", A, "two regions, both a copy of main (qfold folds a graph of one region)",
        "regions", [],
        lambda gr: gr.regions.append(copy.deepcopy(gr.regions[0])))

    def two_blocks(gr):
        b2 = copy.deepcopy(gr.main)
        b2.name = "second"
        gr.regions[0].blocks.append(b2)
    bad("two_blocks", A, "region main holds two blocks (main and second)", "blocks", ["main"],
        two_blocks)
    bad("duplicate_tensor", A, "two tensors named a0_act (the second a copy of the first)",
        "duplicate_tensor", ["a0_act"],
        lambda gr: gr.main.tensors.append(copy.deepcopy(tensor(gr, "a0_act"))))
    bad("dangling_input", A, "the MUL a0_mul reads a0_act_missing, a name no tensor has",
        "dangling_input", ["a0_act_missing", "a0_mul"],
        lambda gr: op_of(gr, "a0_mul").inputs.__setitem__(0, "a0_act_missing"))
    bad("dangling_output", A, "an IDENTITY a0_dead (reading x, read by nothing) writes a0_nowhere, "
        "a name no tensor has", "dangling_output", ["a0_nowhere"],
        lambda gr: gr.main.operators.append(dead_identity("x", ["a0_nowhere"])))

    def two_producers(gr):
        o = copy.deepcopy(op_of(gr, "a0_tanh"))
        o.location = "a0_tanh_again"
        gr.main.operators.append(o)
    bad("duplicate_producer", A, "two TABLE operators write a0_tanh", "duplicate_producer",
        ["a0_tanh"], two_producers)

    def cycle(gr):
        # the activation RESCALE reads the tanh TABLE's output: act -> mul -> to_tanh -> tanh
        op_of(gr, "a0_act").inputs[0] = "a0_tanh"
    bad("cycle", A, "a cycle: the activation RESCALE a0_act reads a0_tanh, which depends on it",
        "cycle", ["a0_"], cycle)
    bad("graph_input_missing", A, "the block's input names x_missing, no tensor",
        "graph_input", ["x_missing"], lambda gr: gr.main.inputs.__setitem__(0, "x_missing"))
    bad("graph_output_missing", A, "the block's output names y_missing, no tensor",
        "graph_output", ["y_missing"], lambda gr: gr.main.outputs.__setitem__(0, "y_missing"))

    def orphan_output(gr):
        gr.main.tensors.append(fb.Tensor("a0_orphan", [1, 256, 4], D["INT8"]))
        gr.main.outputs.append("a0_orphan")
    bad("graph_output_unproduced", A, "a block output, a0_orphan, that no operator writes",
        "unproduced", ["a0_orphan"], orphan_output)

    def const_without_op(gr):
        gr.main.operators.remove(op_of(gr, "a0_tanh_lut"))
    bad("const_without_op", A, "the tanh table a0_tanh_lut holds its data but no CONST writes it "
        "(TOSA 0.80's layout of a constant)", "unproduced", ["a0_tanh_lut"], const_without_op)
    def overwrite_input(gr):
        gr.main.tensors.append(fb.Tensor("x2", [1, 256, 4], D["INT8"]))
        gr.main.inputs.append("x2")
        gr.main.operators.append(dead_identity("x", ["x2"]))
    bad("input_overwritten", A, "an IDENTITY a0_dead writes x2, a second graph input (x2 is read "
        "by nothing)", "input_overwritten", ["x2"], overwrite_input)
    bad("data_size", A, "tensor a0_tanh_lut has shape [256] and type INT8 but 255 data bytes",
        "data_size", ["a0_tanh_lut"],
        lambda gr: setattr(tensor(gr, "a0_tanh_lut"), "data", tensor(gr, "a0_tanh_lut").data[:255]))
    bad("data_size_type", A, "multiplier a0_act_mult is INT32 [1] with 2 data bytes (an INT16's)",
        "data_size", ["a0_act_mult"],
        lambda gr: setattr(tensor(gr, "a0_act_mult"), "data", tensor(gr, "a0_act_mult").data[:2]))
    bad("negative_dim", A, "tensor a0_act has shape [1, -256, 4]", "tensor_shape", ["a0_act"],
        lambda gr: setattr(tensor(gr, "a0_act"), "shape", [1, -256, 4]))
    bad("huge_shape", A, "tensor a0_act has shape [65536, 65536, 65536] (2^48 elements)",
        "tensor_shape", ["a0_act"],
        lambda gr: setattr(tensor(gr, "a0_act"), "shape", [65536, 65536, 65536]))
    bad("type_unknown", A, "tensor a0_mul has type UNKNOWN (0)", "tensor_type", ["a0_mul"],
        lambda gr: setattr(tensor(gr, "a0_mul"), "type", 0))
    bad("type_out_of_enum", A, "tensor a0_mul has type 99, no DType", "tensor_type", ["a0_mul"],
        lambda gr: setattr(tensor(gr, "a0_mul"), "type", 99))
    bad("unranked", A, "tensor a0_act is marked is_unranked", "unranked", ["a0_act"],
        lambda gr: setattr(tensor(gr, "a0_act"), "is_unranked", True))

    def external(gr):
        t = tensor(gr, "a0_tanh_lut")
        t.offset, t.size = 1 << 20, 256
    bad("external_data", A, "tensor a0_tanh_lut also points at data outside the file (offset "
        "2^20, size 256: the >2 GB layout)", "external_data", ["a0_tanh_lut"], external)
    bad("empty_tensor_name", A, "tensor a0_act renamed to the empty string (its readers too)",
        "tensor_name", [], lambda gr: rename(gr, "a0_act", ""))
    bad("op_unknown", A, "the MUL a0_mul has op UNKNOWN (0)", "op", ["a0_mul"],
        lambda gr: setattr(op_of(gr, "a0_mul"), "op", 0))
    bad("op_no_outputs", A, "an IDENTITY a0_dead (reading x) has an empty outputs vector",
        "op_outputs", ["a0_dead"], lambda gr: gr.main.operators.append(dead_identity("x", [])))

    def shape_collision(gr):
        gr.main.shapes = [fb.Shape("a0_act", 1, fb.encode(D["SHAPE"], [4]))]
    bad("shape_name_collision", A, "the block's shapes hold a TosaShape named a0_act, like a "
        "tensor", "duplicate_tensor", ["a0_act"], shape_collision)
    bad("const_with_input", A, "the CONST a0_tanh_lut has an input (x)", "const",
        ["a0_tanh_lut"], lambda gr: setattr(op_of(gr, "a0_tanh_lut"), "inputs", ["x"]))
    bad("const_without_data", A, "the CONST a0_alpha writes a tensor without data", "const",
        ["a0_alpha"], lambda gr: setattr(tensor(gr, "a0_alpha"), "data", None))

    # parameters that are not constants (TOSA 1.0's integer profile needs them constant; Vela
    # 5.1.0 crashes on a RESCALE whose multiplier no CONST writes)
    P = modules["params"]
    for site in P.sites:
        sid = site["site"]
        if sid == "n9":
            continue
        sub = site_module(P, site)
        runtime = [tname(a) for a in sub.args] + [tname(v) for v in sub.nodes if v.kind == "cast"]
        # the parameter operand fed by a run-time value: a CAST's output, else the argument
        param = next((n for n in runtime if n.endswith(("_shift", "_conv_wzp"))
                      and not n.endswith("32")), None) or \
            next(tname(a) for a in sub.args)
        f.add_bad("not_constant." + sid, "params.mlir site " + sid,
                  site["description"] + ": in a .tosa file a graph input (or a CAST of one), not "
                  "a CONST", "not_constant", [param], graph=graph_of(sub))

    def via_identity(gr):
        gr.main.tensors.append(fb.Tensor("a0_act_mult_copy", [1], D["INT32"]))
        gr.main.operators.insert(1, fb.Operator(g.OP["IDENTITY"], g.OP["IDENTITY"], {},
                                                ["a0_act_mult"], ["a0_act_mult_copy"],
                                                "a0_act_mult_copy"))
        op_of(gr, "a0_act").inputs[1] = "a0_act_mult_copy"
    bad("not_constant.identity", A, "the multiplier of RESCALE a0_act is an IDENTITY of a CONST",
        "not_constant", ["a0_act_mult_copy"], via_identity)

    # operand counts and attributes
    bad("rescale_4_operands", A, "RESCALE a0_act has 4 operands (no output_zp)",
        "operand_count", ["a0_act"], lambda gr: op_of(gr, "a0_act").inputs.pop())
    bad("mul_2_operands", A, "MUL a0_mul has 2 operands (TOSA 0.80's MUL: shift an attribute)",
        "operand_count", ["a0_mul"], lambda gr: op_of(gr, "a0_mul").inputs.pop())
    bad("table_1_operand", A, "TABLE a0_tanh has no table operand", "operand_count", ["a0_tanh"],
        lambda gr: op_of(gr, "a0_tanh").inputs.pop())

    def wrong_attr(gr):
        o = op_of(gr, "a0_act")
        o.attr_type = g.ATTR["Conv2dAttribute"]
        o.attr = {"pad": [0, 0, 0, 0], "stride": [1, 1], "dilation": [1, 1]}
    bad("rescale_conv_attribute", A, "RESCALE a0_act carries a Conv2dAttribute", "attribute",
        ["a0_act"], wrong_attr)

    def no_attr(gr):
        o = op_of(gr, "a0_to_tanh")
        o.attr_type, o.attr = 0, None
    bad("rescale_no_attribute", A, "RESCALE a0_to_tanh has no attribute (type NONE)", "attribute",
        ["a0_to_tanh"], no_attr)
    bad("rescale_attribute_type_only", A, "RESCALE a0_to_tanh has attribute type "
        "RescaleAttribute but no table (the verifier lets a missing union value pass)",
        "attribute", ["a0_to_tanh"], lambda gr: setattr(op_of(gr, "a0_to_tanh"), "attr", None))

    # RESCALE parameters
    def retype(name, t, values):
        def fn(gr):
            x = tensor(gr, name)
            x.type, x.data = D[t], fb.encode(D[t], values)
        return fn
    m0 = fb.decode(D["INT32"], tensor(a0, "a0_act_mult").data)
    bad("multiplier_int16_scale32", A, "RESCALE a0_act is scale32 but its multiplier a0_act_mult "
        "is INT16", "param_type", ["a0_act_mult"], retype("a0_act_mult", "INT16", [16384]))
    bad("shift_int32", A, "the shift a0_act_shift of RESCALE a0_act is INT32", "param_type",
        ["a0_act_shift"], retype("a0_act_shift", "INT32",
                                 fb.decode(D["INT8"], tensor(a0, "a0_act_shift").data)))
    bad("input_zp_int16", A, "the input_zp a0_act_izp of RESCALE a0_act (int8 input) is INT16",
        "param_type", ["a0_act_izp"], retype("a0_act_izp", "INT16", [-3]))

    def per_channel_one(gr):
        op_of(gr, "a0_act").attr["per_channel"] = True
    bad("per_channel_one_multiplier", A, "RESCALE a0_act is per_channel on 4 channels with one "
        "multiplier and shift", "param_shape", ["a0_act_mult"], per_channel_one)

    def per_tensor_four(gr):
        for n, t, v in (("a0_act_mult", "INT32", m0 * 4),
                        ("a0_act_shift", "INT8",
                         fb.decode(D["INT8"], tensor(a0, "a0_act_shift").data) * 4)):
            x = tensor(gr, n)
            x.shape, x.data = [4], fb.encode(D[t], v)
    bad("per_tensor_four_multipliers", A, "RESCALE a0_act is per tensor with 4 multipliers",
        "param_shape", ["a0_act_mult"], per_tensor_four)
    bad("shift_63", A, "the shift of RESCALE a0_act is 63 (2..62)", "param_value",
        ["a0_act_shift"], retype("a0_act_shift", "INT8", [63]))
    bad("shift_1", A, "the shift of RESCALE a0_to_tanh is 1 (2..62)", "param_value",
        ["a0_to_tanh_shift"], retype("a0_to_tanh_shift", "INT8", [1]))
    bad("negative_multiplier", A, "the multiplier of RESCALE a0_act is -1073741824", "param_value",
        ["a0_act_mult"], retype("a0_act_mult", "INT32", [-(1 << 30)]))

    def rounding(v):
        return lambda gr: op_of(gr, "a0_act").attr.__setitem__("rounding_mode", v)
    bad("rounding_unknown", A, "RESCALE a0_act has rounding_mode UNKNOWN (0)", "rescale_attr",
        ["a0_act"], rounding(0))
    bad("rounding_out_of_enum", A, "RESCALE a0_act has rounding_mode 7", "rescale_attr",
        ["a0_act"], rounding(7))

    def double_round_16(gr):
        a = op_of(gr, "a0_to_tanh").attr
        a["rounding_mode"], a["scale32"] = g.ROUNDING["DOUBLE_ROUND"], False
        x = tensor(gr, "a0_to_tanh_mult")
        x.type, x.data = D["INT16"], fb.encode(D["INT16"], [16384])
    bad("double_round_scale16", A, "RESCALE a0_to_tanh is DOUBLE_ROUND with scale32 false",
        "rescale_attr", ["a0_to_tanh"], double_round_16)

    def both_unsigned(gr):
        a = op_of(gr, "a0_act").attr
        a["input_unsigned"] = a["output_unsigned"] = True
    bad("unsigned_to_unsigned", A, "RESCALE a0_act has input_unsigned and output_unsigned",
        "rescale_attr", ["a0_act"], both_unsigned)
    bad("output_zp_int32", A, "RESCALE a0_act writes int32 with output_zp 5", "param_value",
        ["a0_act_ozp"], retype("a0_act_ozp", "INT32", [5]))
    bad("input_zp_int32", A, "RESCALE a0_to_tanh reads int32 with input_zp 7", "param_value",
        ["a0_to_tanh_izp"], retype("a0_to_tanh_izp", "INT32", [7]))
    bad("mul_shift_64", A, "the shift of MUL a0_mul is 64 (0..63)", "param_value",
        ["a0_mul_shift"], retype("a0_mul_shift", "INT8", [64]))
    bad("mul_shift_int16", A, "the shift of MUL a0_mul is INT16", "param_type", ["a0_mul_shift"],
        retype("a0_mul_shift", "INT16", [0]))

    def mul_shapes(gr):
        x = tensor(gr, "a0_alpha32")
        x.shape = [1, 1, 3]
        tensor(gr, "a0_alpha").shape = [1, 1, 3]
        tensor(gr, "a0_alpha").data = fb.encode(D["INT8"], [64, 64, 64])
    bad("mul_broadcast", A, "MUL a0_mul multiplies [1, 256, 4] by [1, 1, 3]", "shape", ["a0_mul"],
        mul_shapes)
    bad("rescale_shape", A, "RESCALE a0_to_tanh writes [1, 256, 2] from [1, 256, 4]", "shape",
        ["a0_to_tanh"], lambda gr: setattr(tensor(gr, "a0_to_tanh"), "shape", [1, 256, 2]))
    bad("rescale_fp32", A, "RESCALE a0_to_tanh writes an FP32 tensor", "type", ["a0_to_tanh"],
        lambda gr: setattr(tensor(gr, "a0_to_tanh"), "type", D["FP32"]))

    # TABLE
    def lut(values, t="INT8"):
        def fn(gr):
            x = tensor(gr, "a0_tanh_lut")
            x.shape, x.type, x.data = [len(values)], D[t], fb.encode(D[t], values)
        return fn
    lut0 = fb.decode(D["INT8"], tensor(a0, "a0_tanh_lut").data)
    bad("table_255", A, "the int8 TABLE a0_tanh has a table of 255 entries", "table_size",
        ["a0_tanh_lut"], lut(lut0[:255]))
    bad("table_int16_for_int8", A, "the int8 TABLE a0_tanh has a 513-entry INT16 table",
        "table_size", ["a0_tanh_lut"], lut(lut0 + lut0 + [0], "INT16"))
    bad("table_int32_output", A, "the int8 TABLE a0_tanh writes an INT32 tensor", "type",
        ["a0_tanh"], lambda gr: setattr(tensor(gr, "a0_tanh"), "type", D["INT32"]))
    T16 = "table_chains.e2.tosa"

    def lut512(gr):
        x = tensor(gr, "e2_table_lut")
        x.shape, x.data = [512], x.data[:1024]
    bad("table16_512", T16, "the int16 TABLE e2_table has a table of 512 entries", "table_size",
        ["e2_table_lut"], lut512)

    # CLAMP (chains.d2: an int8 CLAMP)
    CL = "chains.d2.tosa"

    def clamp(lo, hi):
        def fn(gr):
            a = op_of(gr, "d2_clamp").attr
            a["min_val"], a["max_val"] = lo, hi
        return fn
    bad("clamp_bytes", CL, "CLAMP d2_clamp on int8 has min_val of 2 bytes", "clamp_attr",
        ["d2_clamp"], clamp(fb.encode(D["INT16"], [-100]), fb.encode(D["INT8"], [90])))
    bad("clamp_min_above_max", CL, "CLAMP d2_clamp has min_val 90 > max_val -100", "clamp_attr",
        ["d2_clamp"], clamp(fb.encode(D["INT8"], [90]), fb.encode(D["INT8"], [-100])))

    # CONV2D / DEPTHWISE_CONV2D (dyt_affine.b0, .b8)
    C, DW = "dyt_affine.b0.tosa", "dyt_affine.b8.tosa"
    bad("conv_pad_3", C, "CONV2D b0_conv has a pad of 3 values", "conv_attr", ["b0_conv"],
        lambda gr: op_of(gr, "b0_conv").attr.__setitem__("pad", [0, 0, 0]))
    bad("conv_stride_0", C, "CONV2D b0_conv has stride [0, 1]", "conv_attr", ["b0_conv"],
        lambda gr: op_of(gr, "b0_conv").attr.__setitem__("stride", [0, 1]))
    bad("conv_acc_int8", C, "CONV2D b0_conv has acc_type INT8", "conv_attr", ["b0_conv"],
        lambda gr: op_of(gr, "b0_conv").attr.__setitem__("acc_type", D["INT8"]))
    bad("conv_output_shape", C, "CONV2D b0_conv declares output [1, 16, 16, 3] (it gives "
        "[1, 14, 14, 3]: Vela needs exact sizes)", "shape", ["b0_conv"],
        lambda gr: setattr(tensor(gr, "b0_conv"), "shape", [1, 16, 16, 3]))

    def bias2(gr):
        x = tensor(gr, "b0_bias")
        x.shape, x.data = [2], x.data[:8]
    bad("conv_bias_length", C, "CONV2D b0_conv has 3 output channels and a bias of 2",
        "param_shape", ["b0_bias"], bias2)
    bad("depthwise_wzp_int16", DW, "the weight_zp b8_conv_wzp of DEPTHWISE_CONV2D b8_conv is "
        "INT16", "param_type", ["b8_conv_wzp"], retype("b8_conv_wzp", "INT16", [-1]))
    bad("conv_izp_input", C, "the input_zp of CONV2D b0_conv is a graph input", "not_constant",
        ["b0_conv_izp"], lambda gr: make_input(gr, "b0_conv_izp"))

    # CONST_SHAPE (refusals.f5: a RESHAPE)
    R = "refusals.f5.tosa"

    def shape_int32(gr):
        x = tensor(gr, "f5_view_shape")
        x.type, x.data = D["INT32"], fb.encode(D["INT32"], [256, 4])
    bad("const_shape_int32", R, "CONST_SHAPE f5_view_shape writes an INT32 tensor", "const",
        ["f5_view_shape"], shape_int32)


def dead_identity(src, outs):
    """An IDENTITY operator located "a0_dead" (its result, if any, read by nothing)."""
    g = fb.gen()
    return fb.Operator(g.OP["IDENTITY"], g.OP["IDENTITY"], {}, [src], outs, "a0_dead")


def rename(gr, old, new):
    for t in gr.main.tensors:
        if t.name == old:
            t.name = new
    for o in gr.main.operators:
        o.inputs = [new if n == old else n for n in o.inputs or []]
        o.outputs = [new if n == old else n for n in o.outputs or []]
        if o.location == old:
            o.location = new
    gr.main.outputs = [new if n == old else n for n in gr.main.outputs]


def make_input(gr, name):
    """The constant `name` becomes a graph input: its CONST and data dropped."""
    gr.main.operators.remove(op_of(gr, name))
    tensor(gr, name).data = None
    gr.main.inputs.append(name)


# --- the manifest ------------------------------------------------------------------------------

COMMENT = (
    "Generated by tests/tosa_fb/make_files.py: TOSA 1.0 flatbuffer files (schema: "
    "integrations/tosa_flatbuffers/schema/tosa.fbs) for qfold-tosa. good: files that hold valid "
    "TOSA 1.0 (the variants: a 1.1 draft, an unknown op); entries as in "
    "tests/tosa/modules/manifest.json (per entry the passes to run, each alone with --pass, "
    "the expectations per site, `unchanged`: every site refused, so the output must equal the "
    "input byte for byte; null: decided by the report), computed by make_modules.py's models on "
    "the file's own graph. executed: run_model.py prints its outputs (equal to make_modules.py's "
    "expectation; a fold must print the same). model_folded: the file as the model folds it. "
    "bad: one line per file: what is wrong (`wrong`), the good file it was made from, whether "
    "flatc's verifier rejects it, the rule broken (`check`: the code tosa_fb.check() or read() "
    "raises) and what qfold must answer: exit 1 and a message containing every string of "
    "`names` (the tensor or operator at fault; none where the verifier rejects the file).")


def manifest_text(f):
    """JSON, laid out for reading and diffs: a line per site expectation and per bad file."""
    def obj(d, skip, tail):
        head = json.dumps({k: v for k, v in d.items() if k != skip})
        return head[:-1] + (', "%s": [\n' % skip if head != "{}" else '{"%s": [\n' % skip) + \
            tail + "]}"

    def entry(e):
        return "    " + obj(e, "sites", ",\n".join("     " + json.dumps(s) for s in e["sites"]))

    def good(e):
        if "entries" not in e:
            return "  " + json.dumps(e)
        return "  " + obj(e, "entries", ",\n".join(entry(x) for x in e["entries"]))

    text = "{\n"
    text += ' "comment": %s,\n' % json.dumps(COMMENT)
    text += ' "schema": "integrations/tosa_flatbuffers/schema/tosa.fbs",\n'
    text += ' "good": [\n' + ",\n".join(good(e) for e in f.good) + "\n ],\n"
    text += ' "bad": [\n' + ",\n".join("  " + json.dumps(b) for b in f.bad) + "\n ]\n}\n"
    assert json.loads(text) == {"comment": COMMENT, "schema": json.loads(text)["schema"],
                                "good": f.good, "bad": f.bad}
    return text


def build():
    f = Files()
    modules = good_files(f)
    modules["params"] = mm.module_params()
    n9 = site_module(modules["params"], next(s for s in modules["params"].sites
                                              if s["site"] == "n9"))
    f.add_good("params.n9.tosa", graph_of(n9),
               {"source": "module params, site n9", "executed": False,
                "entries": entries(n9, "params.n9.tosa")})
    variants(f)
    bad_files(f, modules)
    return f


def main(argv):
    if len(argv) == 3 and argv[1] == "--expected":
        f = build()
        os.makedirs(argv[2], exist_ok=True)
        for name, text in f.expected.items():
            with open(os.path.join(argv[2], name + ".expected"), "w") as out:
                out.write(text)
        return 0
    if len(argv) > 2 or (len(argv) == 2 and argv[1].startswith("-")):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    outdir = argv[1] if len(argv) == 2 else os.path.join(HERE, "files")
    os.makedirs(outdir, exist_ok=True)
    f = build()
    for name, data in f.data.items():
        with open(os.path.join(outdir, name), "wb") as out:
            out.write(data)
    with open(os.path.join(outdir, "manifest.json"), "w") as out:
        out.write(manifest_text(f))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
