# -*- Python -*-
"""lit configuration for the zshard FileCheck tests."""

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "zshard"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir"]
config.excludes = ["Inputs", "Unit", "e2e", "CMakeLists.txt", "lit.cfg.py",
                   "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.zshard_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP",
                                     "CUDA_HOME", "CUDA_PATH"])
llvm_config.use_default_substitutions()

tool_dirs = [config.zshard_tools_dir, config.llvm_tools_dir]
tools = [ToolSubst("zshard-opt", unresolved="fatal"),
         ToolSubst("zshard-gen", unresolved="fatal"),
         ToolSubst("zshard-translate", unresolved="fatal")]
llvm_config.add_tool_substitutions(tools, tool_dirs)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.zshard_tools_dir, append_path=True)

# A CUDA toolkit (libdevice, ptxas, fatbinary), found as zshard's CUDA target
# finds it, for the tests that link libdevice or build cubins. PTX needs none.
def _find_cuda_toolkit():
    for root in [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"),
                 "/usr/local/cuda"]:
        if root and os.path.isdir(os.path.join(root, "nvvm", "libdevice")):
            return root
    return None


_cuda = _find_cuda_toolkit()
if _cuda and all(os.access(os.path.join(_cuda, "bin", tool), os.X_OK)
                 for tool in ("ptxas", "fatbinary")):
    config.available_features.add("cuda-toolkit")

# mlir-runner and its runtime libraries (LLVM's own), for the tests that run
# a rewritten function and compare its results with the original's.
_runner_libs = {name: os.path.join(os.path.dirname(config.llvm_tools_dir), "lib",
                                   f"lib{name}.so")
                for name in ("mlir_runner_utils", "mlir_c_runner_utils")}
if os.access(os.path.join(config.llvm_tools_dir, "mlir-runner"), os.X_OK) and \
        all(os.path.exists(path) for path in _runner_libs.values()):
    config.available_features.add("mlir-runner")
    for name, path in _runner_libs.items():
        config.substitutions.append((f"%{name}", path))
