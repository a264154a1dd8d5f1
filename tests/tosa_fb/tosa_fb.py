"""Reads, checks, writes and evaluates TOSA 1.0 flatbuffer files (.tosa) for qfold's tests.

The flatbuffer code is what Debian's flatc (2.0.8) generates from qfold's own schema
(integrations/tosa_flatbuffers/schema/tosa.fbs), written at run time into $TOSA_FB_GEN_DIR or a
temporary directory removed at exit; nothing generated is committed. The integer semantics are
the ones of tests/tosa/make_modules.py (its model of the TOSA 1.0 specification), imported, not
restated.

    graph = read(data)        a Graph (plain Python objects), BadFile on what cannot be read
    check(graph)              BadFile(code, subject, message) on the first broken rule
    write(graph) -> bytes     the same layout every time (write(read(data)) == data)
    evaluate(graph)           the main block run by the model on every int8 code of every
                              channel of its input; format_outputs() prints it as @main does

Standard library, the `flatbuffers` package and the generated code only.
"""

import atexit
import importlib
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # leave no __pycache__ in tests/tosa (not ours) nor here

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
SCHEMA = os.path.join(ROOT, "integrations", "tosa_flatbuffers", "schema", "tosa.fbs")
FLATC = os.environ.get("FLATC", "flatc")
IDENTIFIER = b"TOSA"

sys.path.insert(0, os.path.join(ROOT, "tests", "tosa"))
import make_modules as mm  # noqa: E402  (the model: TOSA 1.0 integer semantics, the sites)

import flatbuffers  # noqa: E402


class BadFile(Exception):
    """The file breaks the flatbuffer format or a rule of the TOSA 1.0 specification. code: a
    short stable name of the rule; subject: the tensor / operator / region it is about."""

    def __init__(self, code, subject, message):
        super().__init__("%s: %s" % (code, message))
        self.code, self.subject, self.message = code, subject, message


# --- the generated code ----------------------------------------------------------------------

class _Generated:
    pass


_gen = None


def gen():
    """The modules flatc --python generates from the schema (imported once per process)."""
    global _gen
    if _gen is not None:
        return _gen
    d = os.environ.get("TOSA_FB_GEN_DIR")
    if d:
        d = os.path.join(d, "py")
        os.makedirs(d, exist_ok=True)
    else:
        d = tempfile.mkdtemp(prefix="qfold_tosa_fb_")
        atexit.register(shutil.rmtree, d, True)
    subprocess.run([FLATC, "--python", "-o", d, SCHEMA], check=True)
    sys.path.insert(0, d)
    g = _Generated()
    for name in os.listdir(os.path.join(d, "tosa")):
        if name.endswith(".py") and name != "__init__.py":
            setattr(g, name[:-3], importlib.import_module("tosa." + name[:-3]))
    g.DTYPE = _enum(g.DType.DType)
    g.OP = _enum(g.Op.Op)
    g.ATTR = _enum(g.Attribute.Attribute)
    g.ROUNDING = _enum(g.RoundingMode.RoundingMode)
    g.NAN = _enum(g.NanPropagationMode.NanPropagationMode)
    g.TABLES = schema_tables()
    _gen = g
    return g


def _enum(cls):
    """name -> value and value -> name of a generated enum class."""
    names = {k: v for k, v in vars(cls).items() if not k.startswith("_")}
    out = dict(names)
    out.update({v: k for k, v in names.items()})
    return out


def schema_tables():
    """table name -> [(field, type text, force_align)], in schema (= vtable slot) order, read
    from the schema itself so the attribute codec below follows it."""
    text = re.sub(r"//[^\n]*", "", open(SCHEMA).read())
    tables = {}
    for name, body in re.findall(r"\btable\s+(\w+)\s*\{([^}]*)\}", text):
        fields = []
        for f in body.split(";"):
            f = f.strip()
            if not f:
                continue
            m = re.match(r"(\w+)\s*:\s*(\[\s*\w+\s*\]|\w+)\s*(?:=\s*[-\w.]+)?\s*(?:\((.*)\))?$", f)
            assert m, (name, f)
            fields.append((m.group(1), m.group(2).replace(" ", ""),
                           "force_align" in (m.group(3) or "")))
        tables[name] = fields
    return tables


def camel(field):
    """flatc's Python accessor name of a field."""
    return "".join(p[:1].upper() + p[1:] for p in field.split("_"))


# --- the object model ------------------------------------------------------------------------

class Tensor:
    FIELDS = ("name", "shape", "type", "data", "variable", "is_unranked", "variable_name",
              "offset", "size")

    def __init__(self, name, shape, type, data=None, variable=False, is_unranked=False,
                 variable_name=None, offset=0, size=0):
        self.name, self.shape, self.type, self.data = name, shape, type, data
        self.variable, self.is_unranked, self.variable_name = variable, is_unranked, variable_name
        self.offset, self.size = offset, size

    def __eq__(self, o):
        return all(getattr(self, f) == getattr(o, f) for f in self.FIELDS)


class Shape:
    def __init__(self, name, rank, data=None):
        self.name, self.rank, self.data = name, rank, data

    def __eq__(self, o):
        return (self.name, self.rank, self.data) == (o.name, o.rank, o.data)


class Operator:
    """attr: None (no table) or {field: value} of the table of union member attr_type; location:
    None (no OpLocation table) or its text (None when the table has no text)."""
    FIELDS = ("op", "attr_type", "attr", "inputs", "outputs", "has_location", "location")

    def __init__(self, op, attr_type, attr, inputs, outputs, location=None, has_location=None):
        self.op, self.attr_type, self.attr = op, attr_type, attr
        self.inputs, self.outputs = inputs, outputs
        self.location = location
        self.has_location = location is not None if has_location is None else has_location

    def __eq__(self, o):
        return all(getattr(self, f) == getattr(o, f) for f in self.FIELDS)

    @property
    def label(self):
        """How messages name an operator: its location, else its first output."""
        if self.location:
            return self.location
        if self.outputs:
            return self.outputs[0]
        return "<operator without outputs>"


class Block:
    def __init__(self, name, operators, tensors, inputs, outputs, shapes=None):
        self.name, self.operators, self.tensors = name, operators, tensors
        self.inputs, self.outputs, self.shapes = inputs, outputs, shapes

    def __eq__(self, o):
        return ((self.name, self.operators, self.tensors, self.inputs, self.outputs, self.shapes)
                == (o.name, o.operators, o.tensors, o.inputs, o.outputs, o.shapes))


class Region:
    def __init__(self, name, blocks):
        self.name, self.blocks = name, blocks

    def __eq__(self, o):
        return (self.name, self.blocks) == (o.name, o.blocks)


class Graph:
    """version: None (absent: the schema requires it) or [major, minor, patch, draft];
    identifier: the 4 bytes written after the root offset, None for none."""

    def __init__(self, version, regions, identifier=IDENTIFIER):
        self.version, self.regions, self.identifier = version, regions, identifier

    def __eq__(self, o):
        return (self.version, self.regions, self.identifier) == (o.version, o.regions,
                                                                 o.identifier)

    @property
    def main(self):
        return self.regions[0].blocks[0]


# --- element types -------------------------------------------------------------------------

# DType -> (bytes per element, struct format of one element or None). INT4 packs two elements
# per byte, INT48 is 6 little-endian bytes, SHAPE 8 (int64).
ELEMENT = {"BOOL": (1, "<B"), "INT4": (0.5, None), "INT8": (1, "<b"), "INT16": (2, "<h"),
           "INT32": (4, "<i"), "INT48": (6, None), "FP32": (4, "<f"), "FP16": (2, None),
           "BF16": (2, None), "SHAPE": (8, "<q"), "FP8E4M3": (1, None), "FP8E5M2": (1, None)}
MODEL_TYPE = {"INT8": "i8", "INT16": "i16", "INT32": "i32"}
FB_TYPE = {"i8": "INT8", "i16": "INT16", "i32": "INT32", "shape": "SHAPE"}


def type_name(t):
    return gen().DTYPE.get(t, "DType(%d)" % t)


def data_bytes(type, count):
    size = ELEMENT[type_name(type)][0]
    return (count + 1) // 2 if size == 0.5 else count * size


def encode(type, values):
    fmt = ELEMENT[type_name(type)][1]
    return b"".join(struct.pack(fmt, v) for v in values)


def decode(type, data):
    size, fmt = ELEMENT[type_name(type)]
    return [struct.unpack_from(fmt, data, i)[0] for i in range(0, len(data), size)]


def element_count(shape, limit=1 << 40):
    """The product of the dims, or None when a dim is negative or the product passes limit."""
    n = 1
    for d in shape or []:
        if d < 0:
            return None
        n *= d
        if n > limit:
            return None
    return n


# --- writing ---------------------------------------------------------------------------------

def _string(b, s):
    # bytes, not str: flatbuffers 2.0.8's CreateString sizes a str by its characters, not its
    # UTF-8 bytes, and corrupts the buffer for any non-ASCII name
    return b.CreateString(s.encode("utf-8", "surrogateescape"))


def _bytes(b, data, align):
    b.StartVector(1, len(data), align)
    b.head = b.Head() - len(data)
    b.Bytes[b.Head():b.Head() + len(data)] = data
    return b.EndVector()


def _offsets(b, start, offs):
    start(b, len(offs))
    for o in reversed(offs):
        b.PrependUOffsetTRelative(o)
    return b.EndVector()


def _strings(b, start, strs):
    return _offsets(b, start, [_string(b, s) for s in strs])


def _scalars(b, elem, fmt, values):
    b.StartVector(elem, len(values), elem)
    for v in reversed(values):
        getattr(b, "Prepend" + fmt)(v)
    return b.EndVector()


def _attribute(b, name, values):
    """A table of the Attribute union, its fields in schema order (absent ones left out)."""
    g = gen()
    if name not in g.TABLES:
        raise ValueError("no attribute table %r in the schema: cannot write it" % name)
    mod = getattr(g, name)
    fields = g.TABLES[name]
    made = {}
    for f, t, align8 in fields:
        v = values.get(f)
        if v is None:
            continue
        if t == "string":
            made[f] = _string(b, v)
        elif t == "[ubyte]":
            made[f] = _bytes(b, v, 8 if align8 else 1)
        elif t == "[int32]":
            made[f] = _scalars(b, 4, "Int32", v)
        elif t.startswith("["):
            raise ValueError("attribute field type " + t)
    mod.Start(b)
    for f, t, _ in fields:
        v = values.get(f)
        if v is None:
            continue
        getattr(mod, "Add" + camel(f))(b, made.get(f, v))
    return mod.End(b)


def _tensor(b, t):
    g = gen()
    T = g.TosaTensor
    name = _string(b, t.name) if t.name is not None else None
    shape = _scalars(b, 4, "Int32", t.shape) if t.shape is not None else None
    data = _bytes(b, t.data, 8) if t.data is not None else None
    vname = _string(b, t.variable_name) if t.variable_name is not None else None
    T.Start(b)
    if name is not None:
        T.AddName(b, name)
    if shape is not None:
        T.AddShape(b, shape)
    T.AddType(b, t.type)
    if data is not None:
        T.AddData(b, data)
    T.AddVariable(b, t.variable)
    T.AddIsUnranked(b, t.is_unranked)
    if vname is not None:
        T.AddVariableName(b, vname)
    T.AddOffset(b, t.offset)
    T.AddSize(b, t.size)
    return T.End(b)


def _shape(b, s):
    S = gen().TosaShape
    name = _string(b, s.name) if s.name is not None else None
    data = _bytes(b, s.data, 8) if s.data is not None else None
    S.Start(b)
    if name is not None:
        S.AddName(b, name)
    S.AddRank(b, s.rank)
    if data is not None:
        S.AddData(b, data)
    return S.End(b)


def _operator(b, o):
    g = gen()
    O = g.TosaOperator
    attr = None
    if o.attr is not None:
        attr = _attribute(b, g.ATTR[o.attr_type], o.attr)
    ins = _strings(b, O.StartInputsVector, o.inputs) if o.inputs is not None else None
    outs = _strings(b, O.StartOutputsVector, o.outputs) if o.outputs is not None else None
    loc = None
    if o.has_location:
        text = _string(b, o.location) if o.location is not None else None
        g.OpLocation.Start(b)
        if text is not None:
            g.OpLocation.AddText(b, text)
        loc = g.OpLocation.End(b)
    O.Start(b)
    O.AddOp(b, o.op)
    O.AddAttributeType(b, o.attr_type)
    if attr is not None:
        O.AddAttribute(b, attr)
    if ins is not None:
        O.AddInputs(b, ins)
    if outs is not None:
        O.AddOutputs(b, outs)
    if loc is not None:
        O.AddLocation(b, loc)
    return O.End(b)


def _block(b, k):
    B = gen().TosaBasicBlock
    name = _string(b, k.name) if k.name is not None else None
    ops = (_offsets(b, B.StartOperatorsVector, [_operator(b, o) for o in k.operators])
           if k.operators is not None else None)
    tens = (_offsets(b, B.StartTensorsVector, [_tensor(b, t) for t in k.tensors])
            if k.tensors is not None else None)
    ins = _strings(b, B.StartInputsVector, k.inputs) if k.inputs is not None else None
    outs = _strings(b, B.StartOutputsVector, k.outputs) if k.outputs is not None else None
    shapes = (_offsets(b, B.StartShapesVector, [_shape(b, s) for s in k.shapes])
              if k.shapes is not None else None)
    B.Start(b)
    for add, v in ((B.AddName, name), (B.AddOperators, ops), (B.AddTensors, tens),
                   (B.AddInputs, ins), (B.AddOutputs, outs), (B.AddShapes, shapes)):
        if v is not None:
            add(b, v)
    return B.End(b)


def _region(b, r):
    R = gen().TosaRegion
    name = _string(b, r.name) if r.name is not None else None
    blocks = (_offsets(b, R.StartBlocksVector, [_block(b, k) for k in r.blocks])
              if r.blocks is not None else None)
    R.Start(b)
    if name is not None:
        R.AddName(b, name)
    if blocks is not None:
        R.AddBlocks(b, blocks)
    return R.End(b)


def write(graph):
    """The file's bytes. Deterministic: the same graph gives the same bytes."""
    g = gen()
    b = flatbuffers.Builder(4096)
    regions = None
    if graph.regions is not None:
        regions = _offsets(b, g.TosaGraph.StartRegionsVector,
                           [_region(b, r) for r in graph.regions])
    version = None
    if graph.version is not None:
        V = g.Version
        V.Start(b)
        V.Add_major(b, graph.version[0])
        V.Add_minor(b, graph.version[1])
        V.Add_patch(b, graph.version[2])
        V.Add_draft(b, graph.version[3])
        version = V.End(b)
    g.TosaGraph.Start(b)
    if version is not None:
        g.TosaGraph.AddVersion(b, version)
    if regions is not None:
        g.TosaGraph.AddRegions(b, regions)
    root = g.TosaGraph.End(b)
    b.Finish(root, file_identifier=graph.identifier)
    return bytes(b.Output())


# --- reading ---------------------------------------------------------------------------------

class _Reader:
    """Reads through the generated accessors, checking every vector against the buffer first:
    this is no verifier (flatc's is, see verify()), only a guard against reading forever."""

    def __init__(self, buf):
        self.buf = buf

    def vector(self, obj, slot, elem):
        """(start, length) of vector field `slot` of obj, or None when absent."""
        tab = obj._tab
        o = tab.Offset(4 + 2 * slot)
        if o == 0:
            return None
        start, n = tab.Vector(o), tab.VectorLen(o)
        if start < 0 or n < 0 or start + n * elem > len(self.buf):
            raise BadFile("unreadable", "", "a vector runs past the end of the file")
        return start, n

    def ubytes(self, obj, slot):
        v = self.vector(obj, slot, 1)
        return None if v is None else bytes(self.buf[v[0]:v[0] + v[1]])

    def strings(self, obj, slot, get):
        v = self.vector(obj, slot, 4)
        return None if v is None else [self.text(get(j)) for j in range(v[1])]

    def ints(self, obj, slot, get):
        v = self.vector(obj, slot, 4)
        return None if v is None else [get(j) for j in range(v[1])]

    def tables(self, obj, slot, get):
        v = self.vector(obj, slot, 4)
        return None if v is None else [get(j) for j in range(v[1])]

    @staticmethod
    def text(s):
        return None if s is None else s.decode("utf-8", "surrogateescape")

    def attribute(self, o):
        g = gen()
        table = o.Attribute()
        if table is None:
            return None
        name = g.ATTR.get(o.AttributeType())
        if name is None or name == "NONE":
            # a table whose union type names no member: kept as an empty table
            return {}
        mod = getattr(g, name)
        a = getattr(mod, name)()
        a.Init(table.Bytes, table.Pos)
        out = {}
        for slot, (f, t, _) in enumerate(g.TABLES[name]):
            if t == "string":
                v = self.text(getattr(a, camel(f))())
            elif t == "[ubyte]":
                v = self.ubytes(a, slot)
            elif t == "[int32]":
                v = self.ints(a, slot, getattr(a, camel(f)))
            else:
                v = getattr(a, camel(f))()
            if v is not None:
                out[f] = v
        return out

    def graph(self):
        g = gen()
        root = g.TosaGraph.TosaGraph.GetRootAs(self.buf, 0)
        v = root.Version()
        version = None if v is None else [v._major(), v._minor(), v._patch(), bool(v._draft())]
        regions = self.tables(root, 1, root.Regions)
        if regions is not None:
            regions = [self.region(r) for r in regions]
        return Graph(version, regions, bytes(self.buf[4:8]))

    def region(self, r):
        blocks = self.tables(r, 1, r.Blocks)
        return Region(self.text(r.Name()),
                      None if blocks is None else [self.block(k) for k in blocks])

    def block(self, k):
        ops = self.tables(k, 1, k.Operators)
        tens = self.tables(k, 2, k.Tensors)
        shapes = self.tables(k, 5, k.Shapes)
        return Block(self.text(k.Name()),
                     None if ops is None else [self.operator(o) for o in ops],
                     None if tens is None else [self.tensor(t) for t in tens],
                     self.strings(k, 3, k.Inputs), self.strings(k, 4, k.Outputs),
                     None if shapes is None else [self.shape(s) for s in shapes])

    def tensor(self, t):
        return Tensor(self.text(t.Name()), self.ints(t, 1, t.Shape), t.Type(), self.ubytes(t, 3),
                      bool(t.Variable()), bool(t.IsUnranked()), self.text(t.VariableName()),
                      t.Offset(), t.Size())

    def shape(self, s):
        return Shape(self.text(s.Name()), s.Rank(), self.ubytes(s, 2))

    def operator(self, o):
        loc = o.Location()
        return Operator(o.Op(), o.AttributeType(), self.attribute(o),
                        self.strings(o, 3, o.Inputs), self.strings(o, 4, o.Outputs),
                        None if loc is None else self.text(loc.Text()),
                        has_location=loc is not None)


def misaligned(buf):
    """Names of the tensors (and CLAMP operators) of a readable file whose data (min_val /
    max_val) does not start 8-aligned, as the schema's force_align: 8 asks."""
    g = gen()
    r = _Reader(buf)
    root = g.TosaGraph.TosaGraph.GetRootAs(buf, 0)
    out = []
    for region in r.tables(root, 1, root.Regions) or []:
        for blk in r.tables(region, 1, region.Blocks) or []:
            for t in r.tables(blk, 2, blk.Tensors) or []:
                v = r.vector(t, 3, 1)
                if v is not None and v[0] % 8:
                    out.append(r.text(t.Name()))
            for o in r.tables(blk, 1, blk.Operators) or []:
                if g.ATTR.get(o.AttributeType()) == "ClampAttribute" and o.Attribute():
                    a = g.ClampAttribute.ClampAttribute()
                    a.Init(o.Attribute().Bytes, o.Attribute().Pos)
                    if any(v is not None and v[0] % 8 for v in (r.vector(a, 0, 1),
                                                                 r.vector(a, 1, 1))):
                        out.append(r.text(o.Outputs(0)))
    return out


def read(buf):
    """The graph a file holds. BadFile: too short, not a TOSA file, or unreadable (run verify()
    first on untrusted files: this reader does not check every offset)."""
    if len(buf) < 8:
        raise BadFile("truncated", "", "%d bytes: shorter than a flatbuffer header" % len(buf))
    if bytes(buf[4:8]) != IDENTIFIER:
        raise BadFile("identifier", "", "file identifier %r, not %r" % (bytes(buf[4:8]),
                                                                         IDENTIFIER))
    try:
        return _Reader(buf).graph()
    except BadFile:
        raise
    except (IndexError, struct.error, ValueError, TypeError, UnicodeError) as e:
        raise BadFile("unreadable", "", "not a readable flatbuffer (%s)" % e)


def verify(path, workdir=None):
    """flatc's verdict on a file: (True, "") when flatc converts it to JSON with the schema
    (file identifier and the flatbuffers verifier included), else (False, flatc's message)."""
    d = workdir or tempfile.mkdtemp(prefix="qfold_tosa_fb_v_")
    try:
        p = subprocess.run([FLATC, "--json", "--strict-json", "-o", d, SCHEMA, "--", path],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        return p.returncode == 0, p.stdout.strip()
    finally:
        if workdir is None:
            shutil.rmtree(d, True)


# --- checking: the format's and the specification's rules ------------------------------------

# operand slots that TOSA 1.0's integer profile (without EXT-DYNAMIC) requires to be compile-time
# constants: fed by a CONST operator
PARAMETERS = {"RESCALE": (1, 2, 3, 4), "MUL": (2,), "TABLE": (1,), "CONV2D": (3, 4),
              "DEPTHWISE_CONV2D": (3, 4), "MATMUL": (2, 3)}
OPERANDS = {"RESCALE": 5, "MUL": 3, "TABLE": 2, "CONV2D": 5, "DEPTHWISE_CONV2D": 5, "MATMUL": 4,
            "ADD": 2, "SUB": 2, "CAST": 1, "CLAMP": 1, "RESHAPE": 2, "CONST": 0,
            "CONST_SHAPE": 0, "IDENTITY": 1}
# ops whose attribute table has fields qfold reads
NEEDS_ATTRIBUTE = ("RESCALE", "CONV2D", "DEPTHWISE_CONV2D", "CLAMP")
LAST_OP = 75  # CONST_SHAPE: ops above it are not TOSA 1.0 ops (kept as `other`)


def check(graph):
    """Raises BadFile for the first rule the graph breaks, checked in this order: version,
    regions and blocks, tensors, names, producers, cycles, then the operators qfold folds."""
    g = gen()
    fail = BadFile
    if graph.version is None:
        raise fail("version", "", "no version (the schema requires one)")
    major, minor, patch, draft = graph.version
    if major != 1:
        raise fail("version", "%d.%d" % (major, minor),
                   "TOSA version %d.%d.%d: not 1.x" % (major, minor, patch))
    if not graph.regions or len(graph.regions) != 1:
        raise fail("regions", "", "%d regions: qfold folds a graph of one region" %
                   len(graph.regions or []))
    region = graph.regions[0]
    if not region.blocks or len(region.blocks) != 1:
        raise fail("blocks", region.name or "", "region %r has %d blocks: qfold folds one block"
                   % (region.name, len(region.blocks or [])))
    blk = region.blocks[0]
    tensors = {}
    for t in blk.tensors or []:
        if not t.name:
            raise fail("tensor_name", "", "a tensor without a name")
        if t.name in tensors:
            raise fail("duplicate_tensor", t.name, "two tensors named %r" % t.name)
        tensors[t.name] = t
        if g.DTYPE.get(t.type) in (None, "UNKNOWN"):
            raise fail("tensor_type", t.name, "tensor %r has type %d, not a TOSA 1.0 type"
                       % (t.name, t.type))
        if t.is_unranked:
            raise fail("unranked", t.name, "tensor %r is unranked" % t.name)
        n = element_count(t.shape, 1 << 31)
        if n is None:
            raise fail("tensor_shape", t.name, "tensor %r has shape %s (a negative dim, or more "
                       "than 2^31 elements)" % (t.name, t.shape))
        if t.offset > 1 or t.size:
            raise fail("external_data", t.name, "tensor %r keeps its data outside the file "
                       "(offset %d, size %d)" % (t.name, t.offset, t.size))
        if t.data is not None and len(t.data) != data_bytes(t.type, n):
            raise fail("data_size", t.name, "tensor %r: %d data bytes, its shape %s of %s needs %d"
                       % (t.name, len(t.data), t.shape, type_name(t.type),
                          data_bytes(t.type, n)))
    for s in blk.shapes or []:
        if not s.name or s.name in tensors:
            raise fail("duplicate_tensor", s.name or "", "shape %r: no name, or the name of a "
                       "tensor" % s.name)
    values = set(tensors) | {s.name for s in blk.shapes or []}
    inputs = blk.inputs or []
    for name in inputs:
        if name not in values:
            raise fail("graph_input", name, "graph input %r names no tensor" % name)
    producer = {}
    for o in blk.operators or []:
        opname = g.OP.get(o.op)
        if o.op == 0 or opname is None and o.op <= LAST_OP:
            raise fail("op", o.label, "operator %r has op %d" % (o.label, o.op))
        if not o.outputs:
            raise fail("op_outputs", o.label, "operator %r (%s) has no outputs" % (o.label,
                                                                                  opname))
        for name in o.inputs or []:
            if name not in values:
                raise fail("dangling_input", name, "operator %r reads %r, which names no tensor"
                           % (o.label, name))
        for name in o.outputs:
            if name not in values:
                raise fail("dangling_output", name, "operator %r writes %r, which names no "
                           "tensor" % (o.label, name))
            if name in producer:
                raise fail("duplicate_producer", name, "operators %r and %r both write %r"
                           % (producer[name].label, o.label, name))
            if name in inputs:
                raise fail("input_overwritten", name, "operator %r writes graph input %r"
                           % (o.label, name))
            producer[name] = o
    for o in blk.operators or []:
        for name in o.inputs or []:
            if name not in producer and name not in inputs:
                raise fail("unproduced", name, "operator %r reads %r, which no operator writes "
                           "and is no graph input" % (o.label, name))
    for name in blk.outputs or []:
        if name not in values:
            raise fail("graph_output", name, "graph output %r names no tensor" % name)
        if name not in producer and name not in inputs:
            raise fail("unproduced", name, "graph output %r: no operator writes it" % name)
    order = topological(blk, producer)
    for o in order:
        _check_operator(o, tensors, producer)
    return order


def topological(blk, producer):
    """The operators in an order where each follows the producers of its inputs; BadFile
    `cycle` naming an operator on a cycle."""
    ops = blk.operators or []
    index = {id(o): i for i, o in enumerate(ops)}
    deps = [{index[id(producer[n])] for n in (o.inputs or []) if n in producer} for o in ops]
    state, order = [0] * len(ops), []
    for root in range(len(ops)):
        if state[root]:
            continue
        stack = [(root, iter(sorted(deps[root])))]
        state[root] = 1
        while stack:
            i, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[i] = 2
                order.append(ops[i])
                stack.pop()
            elif state[nxt] == 1:
                raise BadFile("cycle", ops[nxt].label, "operator %r depends on itself (a cycle)"
                              % ops[nxt].label)
            elif state[nxt] == 0:
                state[nxt] = 1
                stack.append((nxt, iter(sorted(deps[nxt]))))
    return order


def _values(t):
    return decode(t.type, t.data)


def _check_operator(o, tensors, producer):
    g = gen()
    name = g.OP.get(o.op)
    fail = BadFile
    label = o.label
    ins = o.inputs or []

    def t(i):
        return tensors.get(ins[i])

    if name in ("CONST", "CONST_SHAPE"):
        if ins:
            raise fail("const", label, "%s %r has inputs" % (name, label))
        out = tensors.get(o.outputs[0])
        if len(o.outputs) != 1 or out is None or out.data is None:
            raise fail("const", o.outputs[0], "%s %r: one output tensor holding the value"
                       % (name, label))
        if (name == "CONST_SHAPE") != (type_name(out.type) == "SHAPE"):
            raise fail("const", out.name, "%s writes %r of type %s" % (name, out.name,
                                                                       type_name(out.type)))
        return
    if name not in OPERANDS:
        return  # not an operator qfold folds: kept as it is
    if len(ins) != OPERANDS[name] or len(o.outputs) != 1:
        raise fail("operand_count", label, "%s %r has %d operands and %d results, TOSA 1.0 "
                   "has %d and 1" % (name, label, len(ins), len(o.outputs), OPERANDS[name]))
    for i in PARAMETERS.get(name, ()):
        p = producer.get(ins[i])
        if p is None or g.OP.get(p.op) != "CONST":
            raise fail("not_constant", ins[i], "operand %d of %s %r, %r, is not written by a "
                       "CONST operator (TOSA 1.0's integer profile needs a constant)"
                       % (i, name, label, ins[i]))
    if any(t(i) is None for i in range(len(ins))):
        return  # a shape operand (TosaShape): nothing to check here
    attr = o.attr
    if name in NEEDS_ATTRIBUTE:
        want = {"RESCALE": "RescaleAttribute", "CONV2D": "Conv2dAttribute",
                "DEPTHWISE_CONV2D": "DepthwiseConv2dAttribute", "CLAMP": "ClampAttribute"}[name]
        if attr is None or g.ATTR.get(o.attr_type) != want:
            raise fail("attribute", label, "%s %r has attribute %s%s, not a %s" % (
                name, label, g.ATTR.get(o.attr_type, o.attr_type),
                "" if attr is not None else " without its table", want))
    elif o.attr_type not in (0, o.op):
        raise fail("attribute", label, "%s %r has attribute %s" % (name, label,
                                                                  g.ATTR.get(o.attr_type)))
    x, out = t(0), tensors[o.outputs[0]]
    xt, ot = type_name(x.type), type_name(out.type)
    if name == "RESCALE":
        _check_rescale(o, label, x, out, t(1), t(2), t(3), t(4), attr)
    elif name == "MUL":
        a, b, s = x, t(1), t(2)
        if type_name(s.type) != "INT8" or element_count(s.shape) != 1:
            raise fail("param_type", s.name, "MUL %r: shift %r must be one int8" % (label, s.name))
        shift = _values(s)[0]
        if not 0 <= shift <= 63 or (shift and xt != "INT32"):
            raise fail("param_value", s.name,
                       "MUL %r: shift %r is %d (0..63, 0 unless int32)"
                       % (label, s.name, shift))
        _check_broadcast(label, [a, b], out)
    elif name == "TABLE":
        tab = t(1)
        want = {"INT8": ("INT8", 256, "INT8"), "INT16": ("INT16", 513, "INT32")}.get(xt)
        if want is None or ot != want[2]:
            raise fail("type", label, "TABLE %r: input %r is %s, output %r %s"
                       % (label, x.name, xt, out.name, ot))
        if type_name(tab.type) != want[0] or element_count(tab.shape) != want[1] or \
                len(tab.shape or []) != 1:
            raise fail("table_size", tab.name, "TABLE %r: table %r is %s %s, a %s input needs %d "
                       "%s entries" % (label, tab.name, type_name(tab.type), tab.shape, xt,
                                       want[1], want[0]))
        _check_same_shape(label, x, out)
    elif name in ("CONV2D", "DEPTHWISE_CONV2D"):
        _check_conv(o, name, label, x, t(1), t(2), t(3), t(4), out, attr)
    elif name == "MATMUL":
        for i, zt in ((2, x), (3, t(1))):
            z = t(i)
            if z.type != zt.type or element_count(z.shape) != 1:
                raise fail("param_type", z.name, "MATMUL %r: zero point %r must be one %s"
                           % (label, z.name, type_name(zt.type)))
    elif name in ("ADD", "SUB"):
        _check_broadcast(label, [x, t(1)], out)
    elif name == "CLAMP":
        size = ELEMENT.get(xt, (0,))[0]
        lo, hi = attr.get("min_val"), attr.get("max_val")
        if xt not in ("INT8", "INT16") or lo is None or hi is None or len(lo) != size or \
                len(hi) != size:
            raise fail("clamp_attr", label, "CLAMP %r on %s: min_val / max_val must be %s bytes of "
                       "its type" % (label, xt, size))
        lo, hi = decode(x.type, lo)[0], decode(x.type, hi)[0]
        if lo > hi:
            raise fail("clamp_attr", label, "CLAMP %r: min_val %d > max_val %d" % (label, lo, hi))
        _check_same_shape(label, x, out)
    elif name == "CAST":
        _check_same_shape(label, x, out)


def _check_same_shape(label, x, out):
    if list(x.shape or []) != list(out.shape or []):
        raise BadFile("shape", out.name, "%r: output %r has shape %s, its input %r %s"
                      % (label, out.name, out.shape, x.name, x.shape))


def _check_broadcast(label, operands, out):
    shapes = [list(a.shape or []) for a in operands]
    want = list(out.shape or [])
    if any(len(s) != len(want) for s in shapes) or \
            any(d not in (1, w) for s in shapes for d, w in zip(s, want)) or \
            any(max(ds) != w for ds, w in zip(zip(*shapes), want)):
        raise BadFile("shape", out.name, "%r: operand shapes %s do not broadcast to %s"
                      % (label, shapes, want))


RESCALE_TYPES = ("INT8", "INT16", "INT32", "INT48")


def _check_rescale(o, label, x, out, mult, shift, izp, ozp, a):
    fail = BadFile
    xt, ot = type_name(x.type), type_name(out.type)
    if xt not in RESCALE_TYPES or ot not in RESCALE_TYPES[:3]:
        raise fail("type", label, "RESCALE %r: input %r is %s, output %r %s"
                   % (label, x.name, xt, out.name, ot))
    _check_same_shape(label, x, out)
    scale32, rounding = bool(a.get("scale32")), a.get("rounding_mode", 0)
    per_channel = bool(a.get("per_channel"))
    iu, ou = bool(a.get("input_unsigned")), bool(a.get("output_unsigned"))
    rname = gen().ROUNDING.get(rounding)
    if rname in (None, "UNKNOWN"):
        raise fail("rescale_attr", label, "RESCALE %r: rounding_mode %d" % (label, rounding))
    if rname == "DOUBLE_ROUND" and not scale32:
        raise fail("rescale_attr", label, "RESCALE %r: DOUBLE_ROUND needs scale32" % label)
    if iu and ou:
        raise fail("rescale_attr", label, "RESCALE %r: input_unsigned and output_unsigned" % label)
    if (iu and ot == "INT32") or (ou and xt == "INT32") or (iu and xt in ("INT32", "INT48")):
        raise fail("rescale_attr", label, "RESCALE %r: unsigned %s to %s" % (label, xt, ot))
    nc = (x.shape or [1])[-1] if per_channel else 1
    for p, want in ((mult, "INT32" if scale32 else "INT16"), (shift, "INT8")):
        if type_name(p.type) != want:
            raise fail("param_type", p.name, "RESCALE %r: %r is %s, not %s" % (
                label, p.name, type_name(p.type), want))
        if len(p.shape or []) != 1 or p.shape[0] != nc:
            raise fail("param_shape", p.name, "RESCALE %r: %r has shape %s, %s needs [%d]" % (
                label, p.name, p.shape, "per_channel" if per_channel else "per tensor", nc))
    for z, zt in ((izp, x), (ozp, out)):
        if z.type != zt.type or element_count(z.shape) != 1:
            raise fail("param_type", z.name, "RESCALE %r: zero point %r must be one %s"
                       % (label, z.name, type_name(zt.type)))
    for m, s in zip(_values(mult), _values(shift)):
        if not 2 <= s <= 62:
            raise fail("param_value", shift.name,
                       "RESCALE %r: shift %r holds %d, outside 2..62"
                       % (label, shift.name, s))
        if m < 0:
            raise fail("param_value", mult.name,
                       "RESCALE %r: multiplier %r holds %d < 0"
                       % (label, mult.name, m))
    zi, zo = _values(izp)[0], _values(ozp)[0]
    if zi != 0 and not (xt == "INT8" or (xt == "INT16" and iu)):
        raise fail("param_value", izp.name,
                   "RESCALE %r: input_zp %r is %d for a %s input"
                   % (label, izp.name, zi, xt))
    if zo != 0 and not (ot == "INT8" or (ot == "INT16" and ou)):
        raise fail("param_value", ozp.name,
                   "RESCALE %r: output_zp %r is %d for a %s output"
                   % (label, ozp.name, zo, ot))
    if (xt == "INT16" and iu and zi not in (0, -32768)) or \
            (ot == "INT16" and ou and zo not in (0, -32768)):
        raise fail("param_value", label, "RESCALE %r: uint16 zero point (%r, %r) not 0 or 32768"
                   % (label, izp.name, ozp.name))


def _check_conv(o, name, label, x, w, bias, izp, wzp, out, a):
    fail = BadFile
    pad, stride, dilation = a.get("pad"), a.get("stride"), a.get("dilation")
    if pad is None or len(pad) != 4 or min(pad) < 0 or stride is None or len(stride) != 2 or \
            min(stride) < 1 or dilation is None or len(dilation) != 2 or min(dilation) < 1:
        raise fail("conv_attr", label, "%s %r: pad %s, stride %s, dilation %s" % (
            name, label, pad, stride, dilation))
    xt = type_name(x.type)
    acc = gen().DTYPE.get(a.get("acc_type", 0))
    if xt == "INT8" and acc != "INT32" or xt == "INT16" and acc != "INT48":
        raise fail("conv_attr", label, "%s %r: acc_type %s for a %s input" % (name, label, acc,
                                                                            xt))
    if len(x.shape or []) != 4 or len(w.shape or []) != 4 or len(out.shape or []) != 4:
        raise fail("shape", label, "%s %r: input, weight and output must be rank 4" % (name,
                                                                                      label))
    for z, zt in ((izp, x), (wzp, w)):
        if z.type != zt.type or element_count(z.shape) != 1:
            raise fail("param_type", z.name, "%s %r: zero point %r must be one %s"
                       % (name, label, z.name, type_name(zt.type)))
    n, ih, iw, ic = x.shape
    if name == "CONV2D":
        oc, kh, kw, wic = w.shape
    else:
        kh, kw, wic, m = w.shape
        oc = wic * m
    if wic != ic or len(bias.shape or []) != 1 or bias.shape[0] not in (1, oc):
        raise fail("param_shape", bias.name if wic == ic else w.name,
                   "%s %r: weight %r %s, bias %r %s for %d input channels"
                   % (name, label, w.name, w.shape, bias.name, bias.shape, ic))
    oh = (ih - 1 + pad[0] + pad[1] - (kh - 1) * dilation[0])
    ow = (iw - 1 + pad[2] + pad[3] - (kw - 1) * dilation[1])
    if oh < 0 or ow < 0 or oh % stride[0] or ow % stride[1] or \
            out.shape != [n, oh // stride[0] + 1, ow // stride[1] + 1, oc]:
        raise fail("shape", out.name, "%s %r: output %r has shape %s, the operator gives %s"
                   % (name, label, out.name, out.shape,
                      [n, oh // stride[0] + 1, ow // stride[1] + 1, oc]))


# --- evaluation with make_modules.py's model -------------------------------------------------

class ModelError(Exception):
    """The graph is valid but the model cannot run it (an op or type it does not model, or a
    REQUIRE of the specification broken on some input)."""


def input_tensor(t):
    if type_name(t.type) != "INT8" or not t.shape:
        raise ModelError("graph input %r is %s %s: the model feeds one int8 input"
                         % (t.name, type_name(t.type), t.shape))
    rows = element_count(t.shape[:-1])
    if not (rows % 256 == 0 or rows == 256):
        raise ModelError("graph input %r: %s holds no whole number of 256-code runs per channel"
                         % (t.name, t.shape))
    return mm.input_codes(tuple(t.shape))


def evaluate(graph, order=None):
    """[(output name, Tensor, unsigned)] of the main block's outputs, the block run by the model
    on every int8 code of every channel of its (one, int8) input. Only what the outputs need is
    evaluated."""
    if order is None:
        order = check(graph)
    blk = graph.main
    tensors = {t.name: t for t in blk.tensors}
    producer = {n: o for o in blk.operators for n in o.outputs}
    if len(blk.inputs or []) != 1:
        raise ModelError("%d graph inputs: the model feeds one" % len(blk.inputs or []))
    values = {blk.inputs[0]: input_tensor(tensors[blk.inputs[0]])}
    unsigned = {}  # output name -> model type, for the outputs a RESCALE writes unsigned
    need = set(blk.outputs)
    for o in reversed(order):
        if any(n in need for n in o.outputs):
            need.update(o.inputs or [])
    for o in order:
        if any(n in need for n in o.outputs):
            _run(o, tensors, values, unsigned)
    return [(n, values[n], unsigned.get(n)) for n in blk.outputs]


def _model_type(t):
    mt = MODEL_TYPE.get(type_name(t.type))
    if mt is None:
        raise ModelError("tensor %r is %s: the model runs int8, int16 and int32"
                         % (t.name, type_name(t.type)))
    return mt


def _run(o, tensors, values, unsigned):
    g = gen()
    name = g.OP.get(o.op, "op %d" % o.op)
    out = tensors[o.outputs[0]]
    ins = [values[n] for n in o.inputs or []]
    ts = [tensors[n] for n in o.inputs or []]
    a = o.attr or {}
    try:
        if name in ("CONST", "CONST_SHAPE"):
            values[out.name] = mm.Tensor(tuple(out.shape or [len(_values(out))]), _values(out))
            return
        if name == "RESCALE":
            params = dict(in_t=_model_type(ts[0]), out_t=_model_type(out),
                          multiplier=ins[1].data, shift=ins[2].data, input_zp=ins[3].data[0],
                          output_zp=ins[4].data[0], scale32=bool(a.get("scale32")),
                          rounding=g.ROUNDING[a.get("rounding_mode", 0)],
                          per_channel=bool(a.get("per_channel")),
                          input_unsigned=bool(a.get("input_unsigned")),
                          output_unsigned=bool(a.get("output_unsigned")))
            r = mm.elementwise(lambda idx, v: mm.rescale_value(v, idx[-1], params), ins[0])
            if params["output_unsigned"]:
                unsigned[out.name] = params["out_t"]
        elif name == "MUL":
            s, t = ins[2].data[0], _model_type(ts[0])
            r = mm.elementwise(lambda idx, p, q: mm.mul_value(p, q, s, t), ins[0], ins[1])
        elif name == "ADD":
            r = mm.elementwise(lambda idx, p, q: mm.add_value(p, q), ins[0], ins[1])
        elif name == "SUB":
            r = mm.elementwise(lambda idx, p, q: mm.sub_value(p, q), ins[0], ins[1])
        elif name == "CLAMP":
            lo, hi = decode(ts[0].type, a["min_val"])[0], decode(ts[0].type, a["max_val"])[0]
            r = mm.elementwise(lambda idx, v: mm.clip(v, lo, hi), ins[0])
        elif name == "TABLE":
            tab = list(ins[1].data)
            if _model_type(ts[0]) == "i8":
                r = mm.elementwise(lambda idx, v: mm.table_value(v, tab), ins[0])
            else:
                r = mm.elementwise(lambda idx, v: mm.apply_lookup_s(tab, v), ins[0])
        elif name == "CAST":
            t = _model_type(out)
            r = mm.elementwise(lambda idx, v: mm.cast_value(v, t), ins[0])
        elif name == "RESHAPE":
            r = mm.Tensor(tuple(ins[1].data), ins[0].data)
        elif name in ("CONV2D", "DEPTHWISE_CONV2D"):
            if a.get("stride") != [1, 1] or a.get("dilation") != [1, 1]:
                raise ModelError("%s %r: the model runs stride 1, dilation 1" % (name, o.label))
            fn = mm.depthwise_nhwc if name == "DEPTHWISE_CONV2D" else mm.conv2d_nhwc
            r = fn(ins[0], ins[1], ins[2], a["pad"], ins[3].data[0], ins[4].data[0])
        elif name == "MATMUL":
            r = mm.matmul(ins[0], ins[1], ins[2].data[0], ins[3].data[0])
        elif name == "IDENTITY":
            r = ins[0]
        else:
            raise ModelError("the model does not run %s (%r)" % (name, o.label))
    except mm.SpecError as e:
        raise ModelError("%s %r breaks a REQUIRE of the specification: %s" % (name, o.label, e))
    if list(r.shape) != list(out.shape or []):
        raise ModelError("%s %r computes shape %s, its output %r is declared %s"
                         % (name, o.label, list(r.shape), out.name, out.shape))
    values[out.name] = r


def format_outputs(outputs):
    """As tests/tosa/make_modules.py's @main prints: per output its index, then one line
    `( v0, v1, ... )` per row of the last dimension (unsigned outputs zero-extended)."""
    lines = []
    for k, (_, t, unsigned) in enumerate(outputs):
        lines.append(str(k))
        last = t.shape[-1]
        d = [mm.unsigned_of(v, unsigned) for v in t.data] if unsigned else t.data
        for r in range(len(d) // last):
            lines.append("( " + ", ".join(str(v) for v in d[r * last:(r + 1) * last]) + " )")
    return "\n".join(lines) + "\n"
