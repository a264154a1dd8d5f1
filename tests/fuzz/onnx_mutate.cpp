// libFuzzer target: the ONNX adapter's mutation points called in sequences the input chooses,
// with allocation failures injected at chosen steps, on the model in the rest of the input (not
// checked: an embedding compiler's path). Input: 16 control bytes (8 calls of 2 bytes), then the
// model. Findings: any crash or sanitizer report; a call that throws and leaves the serialized
// model different from before it (the strong guarantee of every mutation point).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "onnx_tool.hpp"

namespace {

[[noreturn]] void finding(const char* what, const std::string& detail) {
  std::fprintf(stderr, "onnx_mutate finding: %s: %s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  constexpr std::size_t control = 16;
  if (size < control) return 0;
  const std::string_view model_bytes(reinterpret_cast<const char*>(data) + control, size - control);
  onnx::ModelProto model;
  try {
    if (!qfold_onnx::parse_bytes(model_bytes, model)) return 0;
  } catch (const std::bad_alloc&) {
    return 0;
  }
  qfold_onnx::graph g(model);
  using id = qfold_onnx::graph::node_id;
  const std::vector<float> values(64, 0.5f);
  for (std::size_t c = 0; c < control; c += 2) {
    const std::uint8_t op = data[c], arg = data[c + 1];
    const auto count = g.size();
    if (count == 0) break;
    const auto pick = [&](std::uint8_t x) { return static_cast<id>(x % count); };
    const std::string before = model.SerializeAsString();
    // High bits: inject a failure at that step (15: none).
    const unsigned inject = op >> 4;
    if (inject != 15) g.inject_failure_after(inject);
    bool threw = false;
    try {
      switch (op & 7) {
        case 0: {  // a constant of 1, 2 or 4 dims over the first values
          const std::int64_t shapes[3][4] = {{arg % 65, 0, 0, 0}, {2, 2, 0, 0}, {1, 2, 2, 1}};
          const auto s = arg % 3;
          const std::size_t rank = s == 0 ? 1 : s == 1 ? 2 : 4;
          const std::size_t n = s == 0 ? static_cast<std::size_t>(arg % 65) : 4;
          (void)g.add_constant(std::span<const float>(values).first(n),
                               std::span<const std::int64_t>(shapes[s], rank));
          break;
        }
        case 1:
        case 2: {  // operand (arg & 3) of a node (arg >> 2) becomes node data[c + 2 or 0]
          const id n = pick(static_cast<std::uint8_t>(arg >> 2));
          const id v = pick(data[(c + 2) % control]);
          g.set_operand(n, arg & 3, v);
          break;
        }
        case 3:
          g.remove_last_operand(pick(arg));
          break;
        case 4:
          g.replace_uses(pick(arg), pick(data[(c + 3) % control]));
          break;
        case 5:
          g.erase(pick(arg));  // noexcept
          break;
        case 6:
          (void)g.constant(pick(arg));
          (void)g.output_rank(pick(arg));
          (void)g.constant_bytes(pick(arg));
          break;
        default:
          g.commit();
          break;
      }
    } catch (const std::exception&) {
      threw = true;
    }
    g.inject_failure_after(std::nullopt);
    if (threw && (op & 7) != 7 && model.SerializeAsString() != before)
      finding("a mutation point threw and left the model changed",
              "op " + std::to_string(op & 7) + " arg " + std::to_string(arg));
  }
  g.commit();
  std::string out;
  if (model.ByteSizeLong() <= static_cast<std::size_t>(INT_MAX))
    (void)model.SerializeToString(&out);
  return 0;
}
