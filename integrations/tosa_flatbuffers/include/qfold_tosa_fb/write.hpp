// Writing a folded graph back as a `.tosa` file: the file's own bytes when nothing changed
// (byte-identical), else a new TOSA 1.0 flatbuffer in which every op and tensor no fold touched
// keeps its name, order, data and attributes (and the version, block and region names).
#pragma once

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <qfold_tosa_fb/graph.hpp>
#include <qfold_tosa_fb/read.hpp>
#include <qfold_tosa_fb/schema.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace qfold_tosa_fb {

// A graph that cannot be written (an op whose attribute table this schema does not know).
class write_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Why g cannot be written if it changed (empty: it can). A live op whose attribute type a later
// TOSA version added would lose its attribute: such a file is written back only as it was.
inline std::string unwritable_reason(const graph& g) {
  const model& m = g.source();
  for (const std::uint32_t k : m.unknown_attributes)
    if (g.op_at(k).alive)
      return m.op_label(k) + " carries attribute type " +
             std::to_string(static_cast<unsigned>(m.ops[k].fb->attribute_type())) +
             ", which qfold's TOSA 1.0 schema does not know: a rewritten file would lose it";
  return {};
}

// A new flatbuffer of g as it is now (whether or not it changed). Throws write_error.
inline flatbuffers::DetachedBuffer build_file(const graph& g) {
  using flatbuffers::Offset;
  using flatbuffers::String;
  const model& m = g.source();
  if (const std::string why = unwritable_reason(g); !why.empty()) throw write_error(why);
  // Room for the whole file at once: the tensors' data is most of it.
  flatbuffers::FlatBufferBuilder fbb(
      std::min<std::size_t>(m.bytes.size() + 4096, FLATBUFFERS_MAX_BUFFER_SIZE));
  const auto text = [&](std::string_view s) { return fbb.CreateSharedString(s.data(), s.size()); };
  const auto optional_text = [&](const String* s) -> Offset<String> {
    return s == nullptr ? 0 : fbb.CreateString(s);
  };

  // Tensors, in the file's order (a tensor that took an erased one's name takes its place; the
  // other new ones follow).
  std::vector<graph::node_id> order;
  for (graph::node_id i = 0; i < g.tensor_count(); ++i)
    if (g.alive(i)) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](graph::node_id a, graph::node_id b) {
    return g.tensor_order(a) < g.tensor_order(b);
  });
  std::vector<Offset<tosa::TosaTensor>> tensors;
  tensors.reserve(order.size());
  for (const graph::node_id i : order) {
    const auto original = g.original_index(i);
    const tosa::TosaTensor* fb = original ? m.tensors[*original].fb : nullptr;
    const auto name = text(g.tensor_name(i));
    Offset<flatbuffers::Vector<std::int32_t>> shape = 0;
    if (fb != nullptr) {
      if (fb->shape() != nullptr)
        shape = fbb.CreateVector(fb->shape()->data(), fb->shape()->size());
    } else {
      std::vector<std::int32_t> dims;
      for (const std::int64_t d : g.tensor_shape(i)) dims.push_back(static_cast<std::int32_t>(d));
      shape = fbb.CreateVector(dims);
    }
    Offset<flatbuffers::Vector<std::uint8_t>> data = 0;
    if (const auto bytes = g.tensor_data(i); !bytes.empty()) {
      fbb.ForceVectorAlignment(bytes.size(), sizeof(std::uint8_t), 8);  // force_align: 8
      data = fbb.CreateVector(bytes.data(), bytes.size());
    }
    const auto variable_name = fb != nullptr ? optional_text(fb->variable_name()) : 0;
    tensors.push_back(tosa::CreateTosaTensor(fbb, name, shape, g.tensor_type(i), data,
                                             fb != nullptr && fb->variable(),
                                             fb != nullptr && fb->is_unranked(), variable_name));
  }

  // Operators: the file's in their order, each new one before its first reader.
  std::vector<Offset<tosa::TosaOperator>> operators;
  std::vector<Offset<String>> names;
  for (const std::uint32_t k : g.op_order()) {
    const graph::op_state& o = g.op_at(k);
    names.clear();
    for (const std::uint32_t t : o.inputs) names.push_back(text(g.tensor_name(t)));
    const auto inputs = fbb.CreateVector(names);
    names.clear();
    for (const std::uint32_t t : o.outputs) names.push_back(text(g.tensor_name(t)));
    const auto outputs = fbb.CreateVector(names);
    tosa::Attribute attribute_type = tosa::Attribute_NONE;
    Offset<void> attribute = 0;
    Offset<tosa::OpLocation> location = 0;
    if (o.fb != nullptr) {
      // The file's attribute table, copied through the object API (an unchanged op keeps it).
      attribute_type = o.fb->attribute_type();
      if (attribute_type != tosa::Attribute_NONE && o.fb->attribute() != nullptr) {
        tosa::AttributeUnion copy;
        copy.value = tosa::AttributeUnion::UnPack(o.fb->attribute(), attribute_type, nullptr);
        copy.type = copy.value != nullptr ? attribute_type : tosa::Attribute_NONE;
        attribute = copy.Pack(fbb);
      }
      if (const auto* loc = o.fb->location())
        location = tosa::CreateOpLocation(fbb, optional_text(loc->text()));
    } else {
      switch (o.code) {
        case tosa::Op_CONST:
          attribute_type = tosa::Attribute_ConstAttribute;
          attribute = tosa::CreateConstAttribute(fbb).Union();
          break;
        case tosa::Op_TABLE:
          attribute_type = tosa::Attribute_TableAttribute;
          attribute = tosa::CreateTableAttribute(fbb).Union();
          break;
        case tosa::Op_RESCALE:
          attribute_type = tosa::Attribute_RescaleAttribute;
          attribute = tosa::CreateRescaleAttribute(fbb, o.rescale.scale32, o.rescale.rounding,
                                                   o.rescale.per_channel, o.rescale.input_unsigned,
                                                   o.rescale.output_unsigned)
                          .Union();
          break;
        default:
          throw write_error("qfold_tosa_fb: a new " + op_name(o.code) +
                            " op the writer cannot describe");
      }
      location = tosa::CreateOpLocation(fbb, fbb.CreateString(o.location));
    }
    operators.push_back(tosa::CreateTosaOperator(fbb, o.code, attribute_type, attribute, inputs,
                                                 outputs, location));
  }

  // The block's shapes, as the file has them.
  Offset<flatbuffers::Vector<Offset<tosa::TosaShape>>> shapes = 0;
  if (const auto* s = m.block->shapes()) {
    std::vector<Offset<tosa::TosaShape>> copies;
    copies.reserve(s->size());
    for (const tosa::TosaShape* shape : *s) {
      tosa::TosaShapeT t;
      shape->UnPackTo(&t);
      copies.push_back(tosa::CreateTosaShape(fbb, &t));
    }
    shapes = fbb.CreateVector(copies);
  }
  names.clear();
  for (const std::uint32_t t : m.inputs) names.push_back(text(g.tensor_name(t)));
  const auto block_inputs = fbb.CreateVector(names);
  names.clear();
  for (const std::uint32_t t : g.graph_outputs()) names.push_back(text(g.tensor_name(t)));
  const auto block_outputs = fbb.CreateVector(names);
  const auto operator_vector = fbb.CreateVector(operators);
  const auto tensor_vector = fbb.CreateVector(tensors);
  const auto block =
      tosa::CreateTosaBasicBlock(fbb, optional_text(m.block->name()), operator_vector,
                                 tensor_vector, block_inputs, block_outputs, shapes);
  const auto blocks = fbb.CreateVector(&block, 1);
  const auto region = tosa::CreateTosaRegion(fbb, optional_text(m.region->name()), blocks);
  const auto regions = fbb.CreateVector(&region, 1);
  const auto version =
      tosa::CreateVersion(fbb, m.version.major, m.version.minor, m.version.patch, m.version.draft);
  tosa::FinishTosaGraphBuffer(fbb, tosa::CreateTosaGraph(fbb, version, regions));
  return fbb.Release();
}

// The bytes of g's file: the file's own bytes when g has not changed, else build_file(g).
inline std::vector<std::uint8_t> write_bytes(const graph& g) {
  if (!g.changed()) return {g.source().bytes.begin(), g.source().bytes.end()};
  const flatbuffers::DetachedBuffer b = build_file(g);
  return {b.data(), b.data() + b.size()};
}

}  // namespace qfold_tosa_fb
