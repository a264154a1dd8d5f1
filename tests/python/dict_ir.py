"""The example IR of docs/python.md ("Adapting a Python IR"): a list of dict nodes, adapted to
qfold.run_passes by methods named after the customization points. Node ids are list indices."""
import numpy as np


class DictIR:
    def __init__(self, nodes, outputs):
        self.n, self.outputs = nodes, outputs  # node: {"op", "in": [ids], "data", "attrs"}

    # reads
    def nodes(self):
        return [i for i, d in enumerate(self.n) if not d.get("dead")]

    def kind(self, i):
        return self.n[i]["op"]  # "constant", "convolution", "batch_norm", ... (qfold.OpKind)

    def operands(self, i):
        return list(self.n[i]["in"])

    def use_count(self, i):
        return self.outputs.count(i) + sum(d["in"].count(i) for d in self.n if not d.get("dead"))

    def constant(self, i):
        return self.n[i].get("data")  # None: not a constant

    def conv_attributes(self, i):
        return self.n[i].get("attrs", {})  # groups, transposed, layout, padded, ...

    def batch_norm_attributes(self, i):
        return self.n[i].get("attrs", {})  # epsilon, training

    def output_rank(self, i):
        return self.n[i]["attrs"]["rank"]

    # mutations: each does all it says or raises having changed nothing
    def add_constant(self, data, shape):
        self.n.append({"op": "constant", "in": [], "data": np.asarray(data).reshape(shape)})
        return len(self.n) - 1

    def set_operand(self, i, k, v):
        ops = self.n[i]["in"]
        ops.append(v) if k == len(ops) else ops.__setitem__(k, v)

    def remove_last_operand(self, i):
        self.n[i]["in"].pop()

    def replace_uses(self, old, v):
        for d in self.n:
            d["in"] = [v if x == old else x for x in d["in"]]
        self.outputs = [v if x == old else x for x in self.outputs]

    def erase(self, i):
        self.n[i]["dead"] = True
