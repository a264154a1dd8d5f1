// qfold-tosa IN.tosa [-o OUT.tosa] [--dry-run] [--json] [--pass NAME]...: folds a TOSA 1.0
// flatbuffer (the file ExecuTorch's Arm backend hands to Vela) with qfold's exact passes and
// reports every site. A file where nothing folds is written back byte-identical.
#include <algorithm>
#include <exception>
#include <iostream>
#include <new>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "tosa_tool.hpp"

namespace {

using qfold_tool::exit_bad_input;
using qfold_tool::exit_ok;
using qfold_tool::exit_usage;
using qfold_tool::exit_write;
using qfold_tool::tool_error;

std::string usage() {
  std::string passes;
  for (const auto& n : qfold_tosa_fb::pass_names()) passes += "  " + n + "\n";
  return R"(usage: qfold-tosa IN.tosa [-o OUT.tosa] [--dry-run] [--json] [--pass NAME]...

Folds a TOSA 1.0 flatbuffer (.tosa, as ExecuTorch's Arm backend writes it for Vela) with
qfold's exact passes: a site is folded only where the result is bit for bit the same on every
input, otherwise refused with a reason. Ops and tensors no fold touches keep their names, order,
data and attributes; a file where nothing folds is written back byte-identical.

  IN            the file; - reads standard input
  -o OUT        write the folded file to OUT (-o -: standard output), through a temporary file
                next to OUT (next to its target if OUT is a symbolic link) and a rename
  --dry-run     fold in memory and report; write nothing
  --json        the report as JSON on standard output (then OUT may not be standard output)
  --pass NAME   run only this pass (repeatable; default: all, in this order):
)" + passes +
         R"(  --help        this help

The report (one line per site) goes to standard error. Exit codes: 0 done; 1 bad input (not
readable, not a TOSA 1.x flatbuffer, refused by flatbuffers' verifier, several regions or
blocks, data that disagrees with its shape, names that resolve to no tensor, a cycle, ops qfold
cannot read, a parameter TOSA 1.0 requires to be a constant that no CONST produces); 2 usage;
3 the output could not be written (nothing is left at OUT).
)";
}

struct options {
  std::string input, output;
  bool dry_run = false, json = false, has_output = false;
  std::vector<std::string> passes;
};

// Parses the arguments; nullopt after printing help.
std::optional<options> parse_arguments(int argc, char** argv) {
  options o;
  bool options_done = false, has_input = false;
  const auto names = qfold_tosa_fb::pass_names();
  const auto value = [&](int& i, std::string_view a, std::string_view flag) -> std::string {
    if (a.size() > flag.size() && a[flag.size()] == '=')
      return std::string(a.substr(flag.size() + 1));
    if (i + 1 >= argc) throw tool_error(exit_usage, std::string(flag) + " needs a value");
    return argv[++i];
  };
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    const auto is = [&](std::string_view flag) {
      return a == flag ||
             (a.rfind(flag, 0) == 0 && a.size() > flag.size() && a[flag.size()] == '=');
    };
    if (!options_done && a == "--") {
      options_done = true;
    } else if (!options_done && (a == "--help" || a == "-h")) {
      std::cout << usage();
      return std::nullopt;
    } else if (!options_done && a == "--dry-run") {
      o.dry_run = true;
    } else if (!options_done && a == "--json") {
      o.json = true;
    } else if (!options_done && is("-o")) {
      if (o.has_output) throw tool_error(exit_usage, "-o given twice");
      o.output = value(i, a, "-o");
      o.has_output = true;
      if (o.output.empty()) throw tool_error(exit_usage, "an empty output path");
    } else if (!options_done && is("--pass")) {
      std::string name = value(i, a, "--pass");
      if (std::find(names.begin(), names.end(), name) == names.end()) {
        std::string list;
        for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
        throw tool_error(exit_usage, "unknown pass '" + name + "' (available: " + list + ")");
      }
      if (std::find(o.passes.begin(), o.passes.end(), name) == o.passes.end())
        o.passes.push_back(std::move(name));
    } else if (!options_done && a.size() > 1 && a[0] == '-') {
      throw tool_error(exit_usage, "unknown option '" + std::string(a) + "'");
    } else {
      if (has_input) throw tool_error(exit_usage, "more than one input");
      if (a.empty()) throw tool_error(exit_usage, "an empty input path");
      o.input = a;
      has_input = true;
    }
  }
  if (!has_input) throw tool_error(exit_usage, "expected IN.tosa (or - for standard input)");
  if (!o.has_output && !o.dry_run)
    throw tool_error(exit_usage,
                     "give -o OUT.tosa (-o - for standard output), or --dry-run to write nothing");
  if (o.json && o.has_output && o.output == "-" && !o.dry_run)
    throw tool_error(exit_usage,
                     "--json prints the report on standard output: give -o a file (or --dry-run)");
  return o;
}

void print_json(std::ostream& os, const options& o, std::size_t input_bytes,
                std::optional<std::size_t> output_bytes, const qfold_tosa_fb::model& m,
                bool changed, const std::vector<qfold_tool::site>& sites) {
  using qfold_tool::json_string;
  const auto t = qfold_tool::count(sites);
  const bool written = output_bytes.has_value();
  os << "{\n  \"input\": " << json_string(o.input)
     << ",\n  \"output\": " << (written ? json_string(o.output) : "null")
     << ",\n  \"dry_run\": " << (o.dry_run ? "true" : "false")
     << ",\n  \"version\": " << json_string(m.version.text())
     << ",\n  \"input_bytes\": " << input_bytes
     << ",\n  \"output_bytes\": " << (written ? std::to_string(*output_bytes) : "null")
     << ",\n  \"changed\": " << (changed ? "true" : "false")
     << ",\n  \"operators\": " << m.ops.size() << ",\n  \"tensors\": " << m.tensors.size()
     << ",\n  \"folded\": " << t.folded << ",\n  \"rejected\": " << t.rejected
     << ",\n  \"bytes_removed\": " << t.bytes_removed << ",\n  \"bytes_added\": " << t.bytes_added
     << ",\n  \"sites\": ";
  qfold_tool::print_sites_json(os, sites);
  os << "\n}\n";
}

// Set once the output is being written: an exception from then on is a write failure (exit 3).
bool writing = false;

int run(const options& o) {
  const qfold_tosa_fb_tool::input_bytes in(o.input);
  const std::string name = o.input == "-" ? std::string("<stdin>") : o.input;
  const qfold_tosa_fb::model m = qfold_tosa_fb_tool::read_checked(in.bytes(), name, std::cerr);
  const auto r = qfold_tosa_fb_tool::fold_model(m, o.passes, std::cerr);
  writing = true;
  std::optional<std::size_t> output_bytes;
  if (!o.dry_run) {
    const std::string_view bytes(reinterpret_cast<const char*>(r.output.data()), r.output.size());
    if (o.output != "-") {
      qfold_tool::write_file_atomically(o.output, bytes);
    } else {
      std::cout.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      std::cout.flush();
      if (!std::cout) throw tool_error(exit_write, "cannot write the file to standard output");
    }
    output_bytes = bytes.size();
  }
  if (o.json) {
    print_json(std::cout, o, in.bytes().size(), output_bytes, m, r.changed, r.sites);
    std::cout.flush();
    if (!std::cout) throw tool_error(exit_write, "cannot write the report to standard output");
  } else {
    std::ostringstream os;
    qfold_tool::print_site_lines(os, r.sites);
    qfold_tool::print_totals(os, r.sites);
    os << " in " << m.ops.size() << " operators (TOSA " << m.version.text() << ")\n";
    os << name << ": " << in.bytes().size() << " bytes";
    if (output_bytes)
      os << " -> " << (o.output == "-" ? std::string("<stdout>") : o.output) << ": "
         << *output_bytes << " bytes" << (r.changed ? "\n" : " (unchanged)\n");
    else
      os << " (dry run, nothing written)\n";
    std::cerr << os.str();
  }
  return exit_ok;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::optional<options> o;
    try {
      o = parse_arguments(argc, argv);
    } catch (const tool_error& e) {
      std::cerr << "qfold-tosa: " << e.what() << "\n" << usage();
      return e.code();
    }
    if (!o) return exit_ok;
    return run(*o);
  } catch (const tool_error& e) {
    std::cerr << "qfold-tosa: error: " << e.what() << "\n";
    return e.code();
  } catch (const std::bad_alloc&) {
    std::cerr << "qfold-tosa: error: out of memory while "
              << (writing ? "writing the output" : "reading or folding the file") << "\n";
    return writing ? exit_write : exit_bad_input;
  } catch (const std::exception& e) {
    std::cerr << "qfold-tosa: error: " << (writing ? "while writing: " : "while folding: ")
              << e.what() << "\n";
    return writing ? exit_write : exit_bad_input;
  } catch (...) {
    std::cerr << "qfold-tosa: error: unknown exception\n";
    return writing ? exit_write : exit_bad_input;
  }
}
