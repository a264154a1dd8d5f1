// qfold umbrella header: includes every public header of the library.
// Layers in include order (DESIGN.md): arith, math, quant, table, exact, fold, graph.
#pragma once

#include <qfold/arith/apply_scale.hpp>
#include <qfold/arith/cmsis_nn.hpp>
#include <qfold/arith/gemmlowp.hpp>
#include <qfold/arith/mul.hpp>
#include <qfold/arith/reciprocal_scale.hpp>
#include <qfold/arith/rescale.hpp>
#include <qfold/arith/rescale_array.hpp>
#include <qfold/arith/result.hpp>
#include <qfold/arith/rounding.hpp>
#include <qfold/arith/scale_derivation.hpp>
#include <qfold/arith/tflite.hpp>
#include <qfold/exact/classify.hpp>
#include <qfold/exact/domain.hpp>
#include <qfold/exact/merge.hpp>
#include <qfold/exact/synthesize.hpp>
#include <qfold/fold/batch_norm.hpp>
#include <qfold/fold/rejection.hpp>
#include <qfold/graph/batch_norm_pass.hpp>
#include <qfold/graph/pipeline.hpp>
#include <qfold/graph/report.hpp>
#include <qfold/graph/traits.hpp>
#include <qfold/graph/vocabulary.hpp>
#include <qfold/math/functions.hpp>
#include <qfold/quant/conventions.hpp>
#include <qfold/quant/qparams.hpp>
#include <qfold/table/chain.hpp>
#include <qfold/table/compose.hpp>
#include <qfold/table/functions.hpp>
#include <qfold/table/generate.hpp>
#include <qfold/table/lut.hpp>
#include <qfold/version.hpp>
