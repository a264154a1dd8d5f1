# Conan 2 recipe for qfold, a header-only library. Lives in conan/, so it exports the headers and
# LICENSE from the repository root. Usage: conan create conan/
import os
import re

from conan import ConanFile
from conan.tools.build import check_min_cppstd
from conan.tools.files import copy, load
from conan.tools.layout import basic_layout

required_conan_version = ">=2.0"


class QfoldConan(ConanFile):
    name = "qfold"
    description = "Exact graph folds for quantized ML compilers (header-only C++20)"
    license = "Apache-2.0"
    topics = ("quantization", "compiler", "constexpr", "lookup-table", "header-only")
    package_type = "header-library"
    # Settings only feed validate(); package_id() drops them, one package fits all.
    settings = "os", "arch", "compiler", "build_type"
    no_copy_source = True

    @property
    def _root(self):
        return os.path.join(self.recipe_folder, "..")

    def set_version(self):
        # The same single source of truth as CMake: include/qfold/version.hpp.
        text = load(self, os.path.join(self._root, "include", "qfold", "version.hpp"))
        parts = [re.search(rf"#define QFOLD_VERSION_{p} +(\d+)", text).group(1)
                 for p in ("MAJOR", "MINOR", "PATCH")]
        self.version = ".".join(parts)

    def export_sources(self):
        copy(self, "include/*", self._root, self.export_sources_folder)
        copy(self, "LICENSE", self._root, self.export_sources_folder)

    def layout(self):
        basic_layout(self)

    def package_id(self):
        self.info.clear()

    def validate(self):
        check_min_cppstd(self, 20)

    def build(self):
        pass  # header-only

    def package(self):
        copy(self, "LICENSE", self.source_folder, os.path.join(self.package_folder, "licenses"))
        copy(self, "*.hpp", os.path.join(self.source_folder, "include"),
             os.path.join(self.package_folder, "include"))

    def package_info(self):
        # Same names as the CMake package: find_package(qfold) and qfold::qfold.
        self.cpp_info.set_property("cmake_file_name", "qfold")
        self.cpp_info.set_property("cmake_target_name", "qfold::qfold")
        self.cpp_info.bindirs = []
        self.cpp_info.libdirs = []
