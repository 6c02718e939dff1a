#pragma once
// `numgap demo [DIR]`: writes a float32 reference run and a quantized/fp16
// target run of the demo model (demo_model.hpp) with one broken node, then
// compares them as `numgap compare` would and explains what the report says.
#include <filesystem>

namespace numgap_cli {

int run_demo(const std::filesystem::path& directory);

} // namespace numgap_cli
