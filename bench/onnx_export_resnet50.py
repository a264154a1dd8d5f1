#!/usr/bin/python3
"""Exports torchvision's ResNet-50 to ONNX, BatchNormalization kept, for bench_onnx_fold.

Random weights and batch-norm statistics (seeded), eval mode, exported with
training=torch.onnx.TrainingMode.PRESERVE so that every BatchNormalization stays (about 100 MB,
53 batch norms after Conv). Never committed: make it where the benchmark reads it.

Usage: /usr/bin/python3 bench/onnx_export_resnet50.py OUT.onnx
Needs Debian's python3-torch, python3-torchvision (and python3-onnx for the check).
"""

import sys

import torch
import torchvision


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    torch.manual_seed(0)
    model = torchvision.models.resnet50(weights=None).eval()
    with torch.no_grad():  # statistics that are not all 0 / 1, as in a trained model
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
    torch.onnx.export(model, torch.zeros(1, 3, 224, 224), sys.argv[1], opset_version=13,
                      training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=True)
    try:
        import onnx
        m = onnx.load(sys.argv[1])
        onnx.checker.check_model(m)
        bns = sum(n.op_type == "BatchNormalization" for n in m.graph.node)
        print(f"{sys.argv[1]}: {m.ByteSize()} bytes, {len(m.graph.node)} nodes, {bns} batch norms")
    except ImportError:
        print(f"{sys.argv[1]} written")


if __name__ == "__main__":
    main()
