// Test helper for the golden ONNX models (tests/golden/onnx/, made by make_onnx_models.py):
//   inflate IN OUT            regenerate every initializer whose doc_string is a generator spec
//   compare OUT EXPECTED REPORT  check qfold-onnx's output and report against the expectations
//   truncate IN OUT BYTES     the first BYTES bytes of IN (a truncated file)
//   set-opset IN OUT VERSION  IN with its default-domain opset changed (nothing else)
// Exit code 0 when all is well; every failed check is printed.
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}
void write(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}
onnx::ModelProto load(const std::string& path) {
  onnx::ModelProto m;
  const std::string bytes = read(path);
  if (!m.ParseFromString(bytes)) throw std::runtime_error(path + ": not an ONNX model");
  return m;
}
void save(const onnx::ModelProto& m, const std::string& path) {
  std::string bytes;
  if (!m.SerializeToString(&bytes)) throw std::runtime_error("cannot serialize " + path);
  write(path, bytes);
}

// --- The generator and hash of make_onnx_models.py ------------------------------------------
std::uint64_t fnv1a64(std::string_view s) {
  std::uint64_t h = 0xCBF29CE484222325u;
  for (const char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001B3u;
  return h;
}
std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
  return z ^ (z >> 31);
}
std::vector<float> generate(const std::string& key, char kind, int exponent, std::size_t count) {
  std::vector<float> r(count);
  std::uint64_t state = fnv1a64(key);
  const float scale = std::ldexp(1.0f, -exponent);
  for (float& x : r) {
    const std::uint64_t u = mix64(state += 0x9E3779B97F4A7C15u) >> 40;
    // Exact in float32: an integer of at most 24 bits times a power of two.
    x = kind == 's' ? (static_cast<float>(u) - 8388608.0f) * scale
                    : static_cast<float>(u + 1) * scale;
  }
  return r;
}
std::uint64_t tensor_hash(const float* v, std::size_t n) {
  std::uint64_t h = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, v + i, sizeof bits);
    h += mix64(bits + (i + 1) * 0x9E3779B97F4A7C15u);
  }
  return h;
}

int inflate(const std::string& in, const std::string& out) {
  onnx::ModelProto m = load(in);
  std::size_t filled = 0;
  for (auto& t : *m.mutable_graph()->mutable_initializer()) {
    std::istringstream spec(t.doc_string());
    std::string tag, key;
    char kind = 0;
    int exponent = 0;
    if (!(spec >> tag >> kind >> exponent >> key) || tag != "qfold-gen") continue;
    std::size_t count = 1;
    for (const auto d : t.dims()) count *= static_cast<std::size_t>(d);
    const auto values = generate(key, kind, exponent, count);
    t.set_raw_data(values.data(), values.size() * sizeof(float));
    t.clear_doc_string();
    ++filled;
  }
  onnx::checker::check_model(m);
  save(m, out);
  std::cout << in << ": " << filled << " initializers regenerated -> " << out << "\n";
  return 0;
}

int compare(const std::string& folded, const std::string& expected, const std::string& report) {
  const onnx::ModelProto m = load(folded);
  int failures = 0;
  const auto fail = [&](const std::string& what) {
    std::cout << "FAIL: " << what << "\n";
    ++failures;
  };
  try {
    onnx::checker::check_model(m);
  } catch (const std::exception& e) {
    fail(std::string("the ONNX checker rejects the output: ") + e.what());
  }
  std::map<std::string, const onnx::NodeProto*> nodes;
  std::map<std::string, const onnx::TensorProto*> inits;
  std::size_t batch_norms = 0;
  for (const auto& n : m.graph().node()) {
    nodes[n.name()] = &n;
    batch_norms += n.op_type() == "BatchNormalization" ? 1u : 0u;
  }
  for (const auto& t : m.graph().initializer()) inits[t.name()] = &t;
  // Every initializer has a reader (the folded-away ones are gone).
  std::map<std::string, int> reads;
  for (const auto& n : m.graph().node())
    for (const auto& i : n.input()) ++reads[i];
  for (const auto& o : m.graph().output()) ++reads[o.name()];
  for (const auto& [name, t] : inits)
    if (reads[name] == 0) fail("initializer without a reader left: " + name);

  const std::string report_text = read(report);
  std::istringstream lines(read(expected));
  std::string line;
  std::size_t tensors = 0;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream f(line);
    std::string tag;
    f >> tag;
    if (tag == "model") {
      std::string name, k;
      std::size_t opset = 0, bns = 0, folded_count = 0, refused = 0, left = 0;
      f >> name >> k >> opset >> k >> bns >> k >> folded_count >> k >> refused >> k >> left;
      if (batch_norms != left)
        fail(std::to_string(batch_norms) + " BatchNormalization left, expected " +
             std::to_string(left));
      const std::string summary =
          std::to_string(folded_count) + " folded, " + std::to_string(refused) + " rejected";
      if (report_text.find(summary) == std::string::npos)
        fail("the report does not say '" + summary + "'");
    } else if (tag == "refused") {
      std::string bn, reason;
      f >> bn >> reason;
      if (!nodes.contains(bn)) fail("refused batch norm " + bn + " is gone");
      const std::string site = " -> " + bn + ": rejected (" + reason + ")";
      if (report_text.find(site) == std::string::npos) fail("the report lacks '" + site + "'");
    } else if (tag == "attr") {
      std::string node, attr;
      std::int64_t value = 0;
      f >> node >> attr >> value;
      const auto it = nodes.find(node);
      bool ok = false;
      if (it != nodes.end())
        for (const auto& a : it->second->attribute()) ok |= a.name() == attr && a.i() == value;
      if (!ok) fail(node + ": attribute " + attr + " is not " + std::to_string(value));
    } else if (tag == "tensor") {
      std::string node, shape, hash_hex, source;
      int slot = 0;
      std::size_t count = 0;
      f >> node >> slot >> shape >> hash_hex >> count >> source;
      ++tensors;
      const auto it = nodes.find(node);
      if (it == nodes.end() || slot >= it->second->input_size()) {
        fail(node + ": no such node or input " + std::to_string(slot));
        continue;
      }
      const std::string& name = it->second->input(slot);
      const auto t = inits.find(name);
      if (t == inits.end()) {
        fail(node + " input " + std::to_string(slot) + " (" + name + ") is not an initializer");
        continue;
      }
      std::string dims;
      for (const auto d : t->second->dims()) dims += (dims.empty() ? "" : ",") + std::to_string(d);
      const std::string& raw = t->second->raw_data();
      if (dims != shape || raw.size() != count * sizeof(float)) {
        fail(node + " input " + std::to_string(slot) + ": shape " + dims + ", expected " + shape);
        continue;
      }
      std::vector<float> v(count);
      std::memcpy(v.data(), raw.data(), raw.size());
      char got[17];
      std::snprintf(got, sizeof got, "%016llx",
                    static_cast<unsigned long long>(tensor_hash(v.data(), count)));
      if (hash_hex != got) {
        std::ostringstream first;
        for (std::size_t i = 0; i < std::min<std::size_t>(4, count); ++i)
          first << " " << std::hexfloat << static_cast<double>(v[i]);
        fail(node + " input " + std::to_string(slot) + ": hash " + got + ", expected " + hash_hex +
             " (" + source + "); first values" + first.str() + "; expected" +
             line.substr(line.find(" : ") + 2));
      }
    } else {
      fail("unknown line: " + line);
    }
  }
  std::cout << folded << ": " << tensors << " folded tensors compared bit for bit, " << batch_norms
            << " BatchNormalization left, " << failures << " failures\n";
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> a(argv + 1, argv + argc);
  try {
    if (a.size() == 3 && a[0] == "inflate") return inflate(a[1], a[2]);
    if (a.size() == 4 && a[0] == "compare") return compare(a[1], a[2], a[3]);
    if (a.size() == 4 && a[0] == "truncate") {
      write(a[2], read(a[1]).substr(0, std::stoul(a[3])));
      return 0;
    }
    if (a.size() == 4 && a[0] == "set-opset") {
      onnx::ModelProto m = load(a[1]);
      for (auto& o : *m.mutable_opset_import())
        if (o.domain().empty() || o.domain() == "ai.onnx") o.set_version(std::stoll(a[3]));
      save(m, a[2]);
      return 0;
    }
  } catch (const std::exception& e) {
    std::cerr << "onnx_golden: " << e.what() << "\n";
    return 1;
  }
  std::cerr << "usage: onnx_golden inflate IN OUT | compare OUT EXPECTED REPORT | "
               "truncate IN OUT BYTES | set-opset IN OUT VERSION\n";
  return 2;
}
